//! What the two token backbones, TRACE and PatchTST, share: the shape of their tokens
//! ([`TokenShape`]: context, per-byte width, bytes per token, heads, FFN width, with the
//! limits of doc/FORMAT.md sections 4.6 and 4.7) and the backbone that puts the token
//! front end ([`crate::front::TokenFront`]) before either body ([`TokenBackbone`]).
//!
//! The bodies differ (linear attention with a shared FFN applied `passes` times, or
//! softmax attention with `layers` post-norm encoder layers), so their configurations
//! ([`crate::TraceConfig`], [`crate::PatchTstConfig`]) are a [`TokenShape`] plus their
//! own depth field.

use crate::front::TokenFront;
use crate::{Backbone, Body, Param};
use sep_nn::Rng;

/// The token shape of TRACE and PatchTST (doc/FORMAT.md sections 4.6-4.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenShape {
    /// Context bytes `L` (64 in the paper).
    pub context: u16,
    /// Features per byte `E`, half learned embedding and half position features; a
    /// multiple of 4 (64).
    pub embed: u16,
    /// Bytes per token `G`, dividing `L` (4).
    pub group: u8,
    /// Attention heads, dividing `d = G * E` (8).
    pub heads: u8,
    /// FFN inner width `F` (4096).
    pub ffn: u16,
}

impl TokenShape {
    /// The paper's shape: 64 bytes, 16 tokens of 256, 8 heads, FFN 4096.
    pub const PAPER: TokenShape = TokenShape {
        context: 64,
        embed: 64,
        group: 4,
        heads: 8,
        ffn: 4096,
    };

    /// Tokens `L / G`.
    pub fn tokens(&self) -> usize {
        usize::from(self.context) / usize::from(self.group)
    }

    /// Token width `d = G * E`.
    pub fn width(&self) -> usize {
        usize::from(self.group) * usize::from(self.embed)
    }

    /// Checks the shared limits of doc/FORMAT.md section 4.6; `name` names the backbone
    /// in the message.
    pub fn validate(&self, name: &str) -> Result<(), String> {
        let (l, e, g, h, f) = (
            usize::from(self.context),
            usize::from(self.embed),
            usize::from(self.group),
            usize::from(self.heads),
            usize::from(self.ffn),
        );
        if !(1..=1024).contains(&l) {
            return Err(format!("{name} context {l} outside 1..=1024"));
        }
        if !(4..=1024).contains(&e) || !e.is_multiple_of(4) || l * e > 16384 {
            return Err(format!(
                "{name} embed {e}: must be a multiple of 4 in 4..=1024 with context x embed <= 16384"
            ));
        }
        if g == 0 || !l.is_multiple_of(g) || g * e > 4096 {
            return Err(format!(
                "{name} group {g}: must divide context {l}, with group x embed <= 4096"
            ));
        }
        if h == 0 || !(g * e).is_multiple_of(h) {
            return Err(format!(
                "{name} heads {h}: must divide the token width {}",
                g * e
            ));
        }
        if !(1..=16384).contains(&f) {
            return Err(format!("{name} ffn {f} outside 1..=16384"));
        }
        Ok(())
    }

    /// The shape for listings: `context L, embed E, T tokens of d, H heads, ffn F`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "context {}, embed {}, {} tokens of {}, {} heads, ffn {}",
            self.context,
            self.embed,
            self.tokens(),
            self.width(),
            self.heads,
            self.ffn
        )
    }
}

/// A token backbone: the token front end (byte embedding beside sinusoidal positions,
/// read as `L / G` tokens) before a body, TRACE's or PatchTST's.
pub struct TokenBackbone<B> {
    name: &'static str,
    context: usize,
    front: TokenFront,
    body: B,
}

impl<B: Body> TokenBackbone<B> {
    /// The front end for `shape`, drawn from a generator forked from `Rng::new(seed)`
    /// first, then the body that `body` draws from the same generator after it.
    pub(crate) fn with_body(
        name: &'static str,
        shape: &TokenShape,
        streams: usize,
        seed: u64,
        body: impl FnOnce(&mut Rng) -> B,
    ) -> Self {
        let mut rng = Rng::new(seed);
        let front = TokenFront::new(
            shape.context.into(),
            shape.embed.into(),
            streams,
            &mut rng.fork(),
        );
        let body = body(&mut rng);
        TokenBackbone {
            name,
            context: shape.context.into(),
            front,
            body,
        }
    }
}

impl<B: Body> Backbone for TokenBackbone<B> {
    fn context(&self) -> usize {
        self.context
    }

    fn forward(&mut self, ctx: &[u8], rows: usize) -> &[f32] {
        assert_eq!(
            ctx.len(),
            rows * self.context,
            "{}: context must be [rows x L]",
            self.name
        );
        let x = self.front.forward(ctx);
        self.body.forward(x)
    }

    fn backward(&mut self, dlogits: &[f32]) {
        let dx = self.body.backward(dlogits);
        self.front.backward(dx);
    }

    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.front.visit_params(f);
        Body::visit_params(&mut self.body, f);
    }

    fn reset(&mut self) {}

    fn forward_macs(&self) -> u64 {
        self.body.forward_macs()
    }
}
