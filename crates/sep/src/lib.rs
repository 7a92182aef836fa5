//! The sep library.
