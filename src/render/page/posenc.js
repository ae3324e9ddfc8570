// posenc.js — filled in below
