//! x86 code: the rel32 operand after every E8 (call) and E9 (jmp) byte is
//! made absolute, so repeated calls of one function become repeated bytes.
//!
//! Only operands whose top byte is 0x00 or 0xFF (a displacement within
//! +-16 MiB) are changed, and they are mapped within that set: with
//! `r` the displacement as a signed 25-bit value and `i` the offset of the
//! byte after the operand within the segment, the stored value is
//! `((r + i + 2^24) mod 2^25) - 2^24`, sign-extended to 32 bits. That is a
//! bijection on the set, and operands outside it are left alone, so the
//! inverse is exact for any input. After a converted or skipped operand the
//! scan resumes past it.

const SPAN: i64 = 1 << 25;
const HALF: i64 = 1 << 24;

fn convert(data: &[u8], forward: bool) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut i = 0usize;
    while i + 5 <= out.len() {
        if out[i] == 0xE8 || out[i] == 0xE9 {
            let top = out[i + 4];
            if top == 0x00 || top == 0xFF {
                let v = i64::from(i32::from_le_bytes(
                    out[i + 1..i + 5].try_into().expect("4 bytes"),
                ));
                let pos = ((i + 5) as i64) % SPAN;
                let moved = if forward { v + pos } else { v - pos };
                let w = (moved + HALF).rem_euclid(SPAN) - HALF;
                out[i + 1..i + 5].copy_from_slice(&(w as i32).to_le_bytes());
            }
            i += 5;
        } else {
            i += 1;
        }
    }
    out
}

/// The forward transform.
pub fn forward(data: &[u8]) -> Vec<u8> {
    convert(data, true)
}

/// The inverse of [`forward`].
pub fn inverse(data: &[u8]) -> Vec<u8> {
    convert(data, false)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trips_any_bytes() {
        let mut x = 12345u32;
        let data: Vec<u8> = (0..100_000)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                match (x >> 16) % 5 {
                    0 => 0xE8,
                    1 => 0xFF,
                    2 => 0,
                    _ => (x >> 24) as u8,
                }
            })
            .collect();
        let f = super::forward(&data);
        assert_ne!(f, data);
        assert_eq!(super::inverse(&f), data);
    }

    #[test]
    fn calls_to_one_target_become_equal() {
        // call at 0 to 0x1000 and at 0x100 to 0x1000.
        let mut code = vec![0x90u8; 0x200];
        code[0] = 0xE8;
        code[1..5].copy_from_slice(&(0x1000i32 - 5).to_le_bytes());
        code[0x100] = 0xE8;
        code[0x101..0x105].copy_from_slice(&(0x1000i32 - 0x105).to_le_bytes());
        let f = super::forward(&code);
        assert_eq!(f[1..5], f[0x101..0x105]);
    }
}
