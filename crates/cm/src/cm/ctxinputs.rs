//! Revision 12 (doc/FORMAT.md 4.23.3): a second mixer input per hashed
//! context of the configured families, from the same bit-history state as
//! the context's main input: a fixed bias when the context's slot was
//! never seen (state 0), else the state map's probability in the linear
//! domain, `(p - 2048) >> LIN_SHIFT` (12-bit `p`). The mixer learns which
//! contexts are new and gets a view of the probability that the stretch
//! does not give (the paq8 context maps' several inputs per context).

use crate::mixer2::Mixer2;
use crate::prim::StateMap;

/// The input of a context in state 0 (never seen).
const NEW_INPUT: i32 = 256;

/// The linear input's shift: `(p12 - 2048) >> LIN_SHIFT`.
const LIN_SHIFT: u32 = 2;

/// The first-layer weight the inputs start with (the mixer learns them).
pub(crate) const INITIAL_WEIGHT: i16 = 0;

/// The second inputs of the first hashed contexts, in context order.
#[derive(Debug, Clone)]
pub(crate) struct CtxInputs {
    /// How many contexts (the first ones) get an input.
    contexts: usize,
}

impl CtxInputs {
    /// For `contexts` hashed contexts and `room` free mixer inputs: the
    /// first `min(contexts, room)` contexts; `None` if that is none.
    pub(crate) fn new(contexts: usize, room: usize) -> Option<Self> {
        let contexts = contexts.min(room);
        (contexts > 0).then_some(CtxInputs { contexts })
    }

    /// How many inputs.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.contexts
    }

    /// Sets the inputs `first..first + len()` of `mixer` from the contexts'
    /// maps and states (this bit's).
    #[inline]
    pub(crate) fn set_inputs(
        &self,
        maps: &[StateMap],
        states: &[u8],
        mixer: &mut Mixer2,
        first: usize,
    ) {
        for (j, (map, &s)) in maps.iter().zip(states).take(self.contexts).enumerate() {
            mixer.set(first + j, input(map, s));
        }
    }
}

/// A context's second input in state `s`.
#[inline]
fn input(map: &StateMap, s: u8) -> i32 {
    if s == 0 {
        NEW_INPUT
    } else {
        ((map.p(s) >> 4) as i32 - 2048) >> LIN_SHIFT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_contexts_give_the_bias_and_seen_ones_the_linear_probability() {
        let mut map = StateMap::default();
        assert_eq!(input(&map, 0), NEW_INPUT);
        let s = 1;
        for _ in 0..200 {
            map.update(s, 1, 1023);
        }
        let x = input(&map, s);
        assert!(x > 400 && x <= 512, "{x}");
        assert_eq!(CtxInputs::new(10, 3).map(|c| c.len()), Some(3));
        assert!(CtxInputs::new(10, 0).is_none());
    }
}
