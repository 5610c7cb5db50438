//! Output display: the ASCII folder (§2.5). Byte-level vocabularies split
//! characters across tokens, so it folds the output BYTE stream and keeps a
//! partial UTF-8 character between calls. Hand-written: it is a small state
//! machine the MEGA65 program mirrors, with its own fold table.

/// UTF-8 decoder state: pending code point and continuation bytes still needed.
#[derive(Clone, Debug, Default)]
pub struct AsciiFolder {
    cp: u32,
    need: u8,
}

impl AsciiFolder {
    pub fn new() -> AsciiFolder {
        AsciiFolder::default()
    }

    /// Fold some output bytes (e.g. one token's) to ASCII, appending to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut String) {
        for &b in bytes {
            self.byte(b, out);
        }
    }

    /// Fold a whole byte string from a fresh state.
    pub fn fold_all(bytes: &[u8]) -> String {
        let mut out = String::new();
        AsciiFolder::new().push(bytes, &mut out);
        out
    }

    fn byte(&mut self, b: u8, out: &mut String) {
        if self.need > 0 {
            if b & 0xC0 == 0x80 {
                self.cp = self.cp << 6 | (b & 0x3F) as u32;
                self.need -= 1;
                if self.need == 0 {
                    out.push_str(&fold(self.cp));
                }
                return;
            }
            // A broken sequence: one '?', then b starts afresh.
            out.push('?');
            self.need = 0;
        }
        match b {
            0x00..=0x7F => out.push_str(&fold(b as u32)),
            0xC0..=0xDF => (self.cp, self.need) = ((b & 0x1F) as u32, 1),
            0xE0..=0xEF => (self.cp, self.need) = ((b & 0x0F) as u32, 2),
            0xF0..=0xF7 => (self.cp, self.need) = ((b & 0x07) as u32, 3),
            _ => out.push('?'),
        }
    }
}

/// One code point as ASCII.
pub fn fold(cp: u32) -> std::borrow::Cow<'static, str> {
    use std::borrow::Cow::{Borrowed, Owned};
    let s: &'static str = match cp {
        9 | 10 | 32..=126 => return Owned((cp as u8 as char).to_string()),
        0x2018 | 0x2019 | 0x201A | 0x201B | 0x2032 => "'",
        0x201C | 0x201D | 0x201E | 0x2033 | 0xAB | 0xBB => "\"",
        0x2010..=0x2015 | 0x2212 => "-",
        0x2026 => "...",
        0xA0 => " ",
        0xD7 => "x",
        0xDF => "ss",
        0xE6 => "ae",
        0xC6 => "AE",
        0x153 => "oe",
        0x152 => "OE",
        0xF8 => "o",
        0xD8 => "O",
        0x2022 => "*",
        0xB7 => ".",
        0x2122 => "(TM)",
        0xA9 => "(c)",
        0xAE => "(R)",
        0xC0..=0xFF => {
            // Latin-1 letters to their base letter, by code point from $C0.
            const BASE: &[u8; 64] =
                b"AAAAAAACEEEEIIIIDNOOOOOxOUUUUYTsaaaaaaaceeeeiiiidnooooo/ouuuuyty";
            return Owned((BASE[(cp - 0xC0) as usize] as char).to_string());
        }
        _ => "?",
    };
    Borrowed(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example_byte_by_byte() {
        let text = "“Hi” — café… ☃ soon’!";
        let mut f = AsciiFolder::new();
        let mut out = String::new();
        for b in text.bytes() {
            f.push(&[b], &mut out);
        }
        assert_eq!(out, "\"Hi\" - cafe... ? soon'!");
    }

    #[test]
    fn state_crosses_token_boundaries() {
        // "é" split across two tokens, then a 4-byte emoji in three pieces.
        let mut f = AsciiFolder::new();
        let mut out = String::new();
        for piece in [&b"caf\xC3"[..], b"\xA9 \xF0\x9F", b"\x98", b"\x81!"] {
            f.push(piece, &mut out);
        }
        assert_eq!(out, "cafe ?!");
    }

    #[test]
    fn table_latin1_controls_and_broken_sequences() {
        assert_eq!(
            AsciiFolder::fold_all("ÀÇÐÑØÞßæÆœŒøØ×÷ÿ™©®•·\u{a0}−".as_bytes()),
            "ACDNOTssaeAEoeOEoOx/y(TM)(c)(R)*. -"
        );
        assert_eq!(AsciiFolder::fold_all(b"a\rb\x7f\tc\n"), "a?b?\tc\n");
        // A lead byte cut short by ASCII: '?' then the ASCII byte.
        assert_eq!(AsciiFolder::fold_all(b"x\xE2\x80y"), "x?y");
        // Stray continuation and $F8-$FF bytes.
        assert_eq!(AsciiFolder::fold_all(b"\x80\xF8\xFFz"), "???z");
    }
}
