//! Count-based context models and mixing.
