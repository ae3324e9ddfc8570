// tour.js — filled in below
