//! GPT-2's byte <-> unicode table (§2.4): byte-level BPE vocabularies store
//! every byte as a printable character.

/// The character that stands for byte `b`.
pub fn byte_to_char(b: u8) -> char {
    BYTE_TO_CHAR.with(|t| t[b as usize])
}

/// The byte a character stands for, or None if it is not in the table.
pub fn char_to_byte(c: char) -> Option<u8> {
    let cp = c as u32;
    if cp < 256 && is_direct(cp as u8) {
        return Some(cp as u8);
    }
    // The 68 remapped bytes are U+0100 + k, k = their rank in byte order.
    let k = cp.checked_sub(0x100)? as usize;
    (0u8..=255).filter(|&b| !is_direct(b)).nth(k)
}

/// Decode a whole GPT-2 token string to bytes; None if any character is outside the table.
pub fn decode(s: &str) -> Option<Vec<u8>> {
    s.chars().map(char_to_byte).collect()
}

/// Encode bytes as GPT-2 characters.
pub fn encode(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| byte_to_char(b)).collect()
}

/// Bytes 33–126, 161–172 and 174–255 stand for themselves.
fn is_direct(b: u8) -> bool {
    matches!(b, 33..=126 | 161..=172 | 174..=255)
}

thread_local! {
    static BYTE_TO_CHAR: [char; 256] = {
        let mut t = ['\0'; 256];
        let mut next = 0x100u32;
        for b in 0..=255u8 {
            t[b as usize] = if is_direct(b) {
                b as char
            } else {
                let c = char::from_u32(next).unwrap();
                next += 1;
                c
            };
        }
        t
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_entries_and_round_trip() {
        assert_eq!(byte_to_char(b' '), 'Ġ');
        assert_eq!(byte_to_char(b'\n'), 'Ċ');
        assert_eq!(byte_to_char(0), '\u{100}');
        assert_eq!(byte_to_char(173), '\u{143}');
        assert_eq!(byte_to_char(b'A'), 'A');
        for b in 0..=255u8 {
            assert_eq!(char_to_byte(byte_to_char(b)), Some(b));
        }
        assert_eq!(char_to_byte('\u{144}'), None);
        assert_eq!(char_to_byte('▁'), None);
        assert_eq!(decode("Ġthe"), Some(b" the".to_vec()));
    }
}
