//! Range coder and probability quantizer.
