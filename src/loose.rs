//! Loose objects: probing `xx/yyyy…` files. (To be written.)
