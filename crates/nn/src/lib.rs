//! Neural-network layers built on `sep-kernels`: forward, backward, Adam, seeded init.
