mod idx;
mod midx;
