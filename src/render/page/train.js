// train.js — filled in below
