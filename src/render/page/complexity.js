// complexity.js — filled in below
