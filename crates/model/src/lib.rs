//! Neural backbones behind one trait.
