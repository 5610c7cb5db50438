//! The text screen wherever the VIC-IV registers put it (spec §M7.1): screen RAM pointer
//! $D060–$D063, characters per row $D05E, bytes per row $D058/$D059, rows $D07B (80×25 or 80×50),
//! colours from colour RAM ($FF80000 + $D064/$D065), border/background $D020/$D021. Captured as
//! text or as a PNG, with the glyphs the VIC-IV would draw:
//!
//! * Glyph n's row r is read at CHARPTR + 8n + r, CHARPTR being $D068–$D06A (mega65-core
//!   viciv.vhdl lines 2784–2793 and 4474–4483: bits 19–0 are used). A $D018 write sets CHARPTR
//!   bits 13–11 from its bits 3–1 and clears bits 10–0; the rest stay (lines 2359–2364; xemu's
//!   vic4.c also clears bits 23–16, lines 665–671 — the VHDL is followed here).
//! * CHARPTR in $1000–$1FFF or $9000–$9FFF (bits 19–12 = $01 or $09) reads the VIC-IV's internal
//!   character ROM instead (viciv.vhdl lines 4525–4530; xemu vic4.c lines 1466–1472). This
//!   headless machine has no ROM font: those cells are decoded by the C65 ROM's layout (upper-case
//!   set at +$000, lower-case set at +$800, [`screen_code_char`]) and drawn with [`FONT`]. After
//!   BASIC's RUN CHARPTR is $001800 here ($D018 = $16, lower case: an assumption about what the
//!   ROM leaves).
//! * Any other CHARPTR reads chip RAM: the PNG draws those bytes, and the text shows the ASCII
//!   character whose [`FONT`] glyph (or its inverse) the 8 bytes are, '▒' for any other glyph.

use std::collections::HashMap;

use super::bus::{CHIP_RAM_SIZE, COLOUR_RAM_BASE};
use super::io::reg;
use super::machine::Machine;
use ssnail_format::mega65::vic;

/// Screen geometry read from the VIC-IV registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub screen: u32,
    pub colour_offset: u32,
    pub cols: u32,
    pub rows: u32,
    pub step: u32,
}

/// The character a screen code shows in the ROM's lower-case set (spec §M7.2); reverse video
/// (bit 7) shows the same character. PETSCII graphics have no text equivalent and show as '▒',
/// except the line-drawing ones.
pub fn screen_code_char(code: u8) -> char {
    match code & 0x7F {
        0x00 => '@',
        c @ 0x01..=0x1A => (b'a' + c - 1) as char,
        0x1B => '[',
        0x1C => '£',
        0x1D => ']',
        0x1E => '↑',
        0x1F => '←',
        c @ 0x20..=0x3F => c as char,
        0x40 => '─',
        c @ 0x41..=0x5A => c as char,
        0x5B => '┼',
        0x5D => '│',
        _ => '▒',
    }
}

/// The same in the ROM's upper-case set: letters at $01–$1A, graphics where the lower-case set
/// has capitals.
pub fn screen_code_char_upper(code: u8) -> char {
    match code & 0x7F {
        c @ 0x01..=0x1A => (b'A' + c - 1) as char,
        0x41..=0x5A => '▒',
        c => screen_code_char(c),
    }
}

/// C64/MEGA65 default palette (RGB).
const PALETTE: [[u8; 3]; 16] = [
    [0x00, 0x00, 0x00],
    [0xFF, 0xFF, 0xFF],
    [0xAB, 0x31, 0x26],
    [0x66, 0xDA, 0xFF],
    [0xBB, 0x3F, 0xB8],
    [0x55, 0xCE, 0x58],
    [0x1D, 0x0E, 0x97],
    [0xEA, 0xF5, 0x7C],
    [0xB9, 0x74, 0x18],
    [0x78, 0x53, 0x00],
    [0xDD, 0x93, 0x87],
    [0x5B, 0x5B, 0x5B],
    [0x8B, 0x8B, 0x8B],
    [0xB0, 0xF4, 0xAC],
    [0xAA, 0x9D, 0xEF],
    [0xB8, 0xB8, 0xB8],
];

const BORDER: u32 = 16;

/// 8×8 glyphs for ASCII 32–126, this project's own 5×7 design (drawn for this emulator; no ROM
/// font is used). Each byte is one pixel row, bit 7 = leftmost pixel; glyphs sit in columns 1–5,
/// rows 0–6.
pub const FONT: [[u8; 8]; 95] = [
    [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], // ' '
    [0x10, 0x10, 0x10, 0x10, 0x10, 0x00, 0x10, 0x00], // '!'
    [0x28, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], // '"'
    [0x28, 0x28, 0x7C, 0x28, 0x7C, 0x28, 0x28, 0x00], // '#'
    [0x10, 0x3C, 0x50, 0x38, 0x14, 0x78, 0x10, 0x00], // '$'
    [0x60, 0x64, 0x08, 0x10, 0x20, 0x4C, 0x0C, 0x00], // '%'
    [0x30, 0x48, 0x50, 0x20, 0x54, 0x48, 0x34, 0x00], // '&'
    [0x10, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], // "'"
    [0x08, 0x10, 0x20, 0x20, 0x20, 0x10, 0x08, 0x00], // '('
    [0x20, 0x10, 0x08, 0x08, 0x08, 0x10, 0x20, 0x00], // ')'
    [0x00, 0x10, 0x54, 0x38, 0x54, 0x10, 0x00, 0x00], // '*'
    [0x00, 0x10, 0x10, 0x7C, 0x10, 0x10, 0x00, 0x00], // '+'
    [0x00, 0x00, 0x00, 0x00, 0x30, 0x10, 0x20, 0x00], // ','
    [0x00, 0x00, 0x00, 0x7C, 0x00, 0x00, 0x00, 0x00], // '-'
    [0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x30, 0x00], // '.'
    [0x00, 0x04, 0x08, 0x10, 0x20, 0x40, 0x00, 0x00], // '/'
    [0x38, 0x44, 0x4C, 0x54, 0x64, 0x44, 0x38, 0x00], // '0'
    [0x10, 0x30, 0x10, 0x10, 0x10, 0x10, 0x38, 0x00], // '1'
    [0x38, 0x44, 0x04, 0x08, 0x10, 0x20, 0x7C, 0x00], // '2'
    [0x7C, 0x08, 0x10, 0x08, 0x04, 0x44, 0x38, 0x00], // '3'
    [0x08, 0x18, 0x28, 0x48, 0x7C, 0x08, 0x08, 0x00], // '4'
    [0x7C, 0x40, 0x78, 0x04, 0x04, 0x44, 0x38, 0x00], // '5'
    [0x18, 0x20, 0x40, 0x78, 0x44, 0x44, 0x38, 0x00], // '6'
    [0x7C, 0x04, 0x08, 0x10, 0x20, 0x20, 0x20, 0x00], // '7'
    [0x38, 0x44, 0x44, 0x38, 0x44, 0x44, 0x38, 0x00], // '8'
    [0x38, 0x44, 0x44, 0x3C, 0x04, 0x08, 0x30, 0x00], // '9'
    [0x00, 0x30, 0x30, 0x00, 0x30, 0x30, 0x00, 0x00], // ':'
    [0x00, 0x30, 0x30, 0x00, 0x30, 0x10, 0x20, 0x00], // ';'
    [0x08, 0x10, 0x20, 0x40, 0x20, 0x10, 0x08, 0x00], // '<'
    [0x00, 0x00, 0x7C, 0x00, 0x7C, 0x00, 0x00, 0x00], // '='
    [0x20, 0x10, 0x08, 0x04, 0x08, 0x10, 0x20, 0x00], // '>'
    [0x38, 0x44, 0x04, 0x08, 0x10, 0x00, 0x10, 0x00], // '?'
    [0x38, 0x44, 0x04, 0x34, 0x54, 0x54, 0x38, 0x00], // '@'
    [0x38, 0x44, 0x44, 0x7C, 0x44, 0x44, 0x44, 0x00], // 'A'
    [0x78, 0x44, 0x44, 0x78, 0x44, 0x44, 0x78, 0x00], // 'B'
    [0x38, 0x44, 0x40, 0x40, 0x40, 0x44, 0x38, 0x00], // 'C'
    [0x70, 0x48, 0x44, 0x44, 0x44, 0x48, 0x70, 0x00], // 'D'
    [0x7C, 0x40, 0x40, 0x78, 0x40, 0x40, 0x7C, 0x00], // 'E'
    [0x7C, 0x40, 0x40, 0x78, 0x40, 0x40, 0x40, 0x00], // 'F'
    [0x38, 0x44, 0x40, 0x5C, 0x44, 0x44, 0x3C, 0x00], // 'G'
    [0x44, 0x44, 0x44, 0x7C, 0x44, 0x44, 0x44, 0x00], // 'H'
    [0x38, 0x10, 0x10, 0x10, 0x10, 0x10, 0x38, 0x00], // 'I'
    [0x1C, 0x08, 0x08, 0x08, 0x08, 0x48, 0x30, 0x00], // 'J'
    [0x44, 0x48, 0x50, 0x60, 0x50, 0x48, 0x44, 0x00], // 'K'
    [0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x7C, 0x00], // 'L'
    [0x44, 0x6C, 0x54, 0x54, 0x44, 0x44, 0x44, 0x00], // 'M'
    [0x44, 0x44, 0x64, 0x54, 0x4C, 0x44, 0x44, 0x00], // 'N'
    [0x38, 0x44, 0x44, 0x44, 0x44, 0x44, 0x38, 0x00], // 'O'
    [0x78, 0x44, 0x44, 0x78, 0x40, 0x40, 0x40, 0x00], // 'P'
    [0x38, 0x44, 0x44, 0x44, 0x54, 0x48, 0x34, 0x00], // 'Q'
    [0x78, 0x44, 0x44, 0x78, 0x50, 0x48, 0x44, 0x00], // 'R'
    [0x3C, 0x40, 0x40, 0x38, 0x04, 0x04, 0x78, 0x00], // 'S'
    [0x7C, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x00], // 'T'
    [0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x38, 0x00], // 'U'
    [0x44, 0x44, 0x44, 0x44, 0x44, 0x28, 0x10, 0x00], // 'V'
    [0x44, 0x44, 0x44, 0x54, 0x54, 0x54, 0x28, 0x00], // 'W'
    [0x44, 0x44, 0x28, 0x10, 0x28, 0x44, 0x44, 0x00], // 'X'
    [0x44, 0x44, 0x28, 0x10, 0x10, 0x10, 0x10, 0x00], // 'Y'
    [0x7C, 0x04, 0x08, 0x10, 0x20, 0x40, 0x7C, 0x00], // 'Z'
    [0x38, 0x20, 0x20, 0x20, 0x20, 0x20, 0x38, 0x00], // '['
    [0x00, 0x40, 0x20, 0x10, 0x08, 0x04, 0x00, 0x00], // '\\'
    [0x38, 0x08, 0x08, 0x08, 0x08, 0x08, 0x38, 0x00], // ']'
    [0x10, 0x28, 0x44, 0x00, 0x00, 0x00, 0x00, 0x00], // '^'
    [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7C, 0x00], // '_'
    [0x20, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], // '`'
    [0x00, 0x00, 0x38, 0x04, 0x3C, 0x44, 0x3C, 0x00], // 'a'
    [0x40, 0x40, 0x58, 0x64, 0x44, 0x44, 0x78, 0x00], // 'b'
    [0x00, 0x00, 0x38, 0x40, 0x40, 0x44, 0x38, 0x00], // 'c'
    [0x04, 0x04, 0x34, 0x4C, 0x44, 0x44, 0x3C, 0x00], // 'd'
    [0x00, 0x00, 0x38, 0x44, 0x7C, 0x40, 0x38, 0x00], // 'e'
    [0x18, 0x24, 0x20, 0x70, 0x20, 0x20, 0x20, 0x00], // 'f'
    [0x00, 0x3C, 0x44, 0x44, 0x3C, 0x04, 0x38, 0x00], // 'g'
    [0x40, 0x40, 0x58, 0x64, 0x44, 0x44, 0x44, 0x00], // 'h'
    [0x10, 0x00, 0x30, 0x10, 0x10, 0x10, 0x38, 0x00], // 'i'
    [0x08, 0x00, 0x18, 0x08, 0x08, 0x48, 0x30, 0x00], // 'j'
    [0x40, 0x40, 0x48, 0x50, 0x60, 0x50, 0x48, 0x00], // 'k'
    [0x30, 0x10, 0x10, 0x10, 0x10, 0x10, 0x38, 0x00], // 'l'
    [0x00, 0x00, 0x68, 0x54, 0x54, 0x44, 0x44, 0x00], // 'm'
    [0x00, 0x00, 0x58, 0x64, 0x44, 0x44, 0x44, 0x00], // 'n'
    [0x00, 0x00, 0x38, 0x44, 0x44, 0x44, 0x38, 0x00], // 'o'
    [0x00, 0x00, 0x78, 0x44, 0x78, 0x40, 0x40, 0x00], // 'p'
    [0x00, 0x00, 0x34, 0x4C, 0x3C, 0x04, 0x04, 0x00], // 'q'
    [0x00, 0x00, 0x58, 0x64, 0x40, 0x40, 0x40, 0x00], // 'r'
    [0x00, 0x00, 0x38, 0x40, 0x38, 0x04, 0x78, 0x00], // 's'
    [0x20, 0x20, 0x70, 0x20, 0x20, 0x24, 0x18, 0x00], // 't'
    [0x00, 0x00, 0x44, 0x44, 0x44, 0x4C, 0x34, 0x00], // 'u'
    [0x00, 0x00, 0x44, 0x44, 0x44, 0x28, 0x10, 0x00], // 'v'
    [0x00, 0x00, 0x44, 0x44, 0x54, 0x54, 0x28, 0x00], // 'w'
    [0x00, 0x00, 0x44, 0x28, 0x10, 0x28, 0x44, 0x00], // 'x'
    [0x00, 0x00, 0x44, 0x44, 0x3C, 0x04, 0x38, 0x00], // 'y'
    [0x00, 0x00, 0x7C, 0x08, 0x10, 0x20, 0x7C, 0x00], // 'z'
    [0x08, 0x10, 0x10, 0x20, 0x10, 0x10, 0x08, 0x00], // '{'
    [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x00], // '|'
    [0x20, 0x10, 0x10, 0x08, 0x10, 0x10, 0x20, 0x00], // '}'
    [0x00, 0x00, 0x20, 0x54, 0x08, 0x00, 0x00, 0x00], // '~'
];

impl Machine {
    pub fn screen_geometry(&self) -> Geometry {
        let r = |addr: u16| self.io_regs[reg(addr)] as u32;
        let high = r(vic::SCRNPTR_HIGH);
        let screen = r(vic::SCRNPTR)
            | r(vic::SCRNPTR + 1) << 8
            | r(vic::SCRNPTR + 2) << 16
            | (high & 0x0F) << 24;
        let cols = match r(vic::CHRCOUNT) | ((high >> 4) & 3) << 8 {
            0 => 80,
            n => n.min(255),
        };
        let rows = match r(vic::DISPROWS) {
            0 => 25,
            n => n.min(100),
        };
        let step = match r(vic::LINESTEP) | r(vic::LINESTEP + 1) << 8 {
            0 => cols,
            n => n,
        };
        let colour_offset = r(vic::COLPTR) | r(vic::COLPTR + 1) << 8;
        Geometry {
            screen,
            colour_offset,
            cols,
            rows,
            step,
        }
    }

    /// Screen codes, row by row.
    pub fn screen_codes(&mut self) -> Vec<Vec<u8>> {
        let g = self.screen_geometry();
        (0..g.rows)
            .map(|row| {
                (0..g.cols)
                    .map(|col| self.read_phys(g.screen + row * g.step + col))
                    .collect()
            })
            .collect()
    }

    /// CHARPTR ($D068–$D06A), the address glyphs are read from.
    pub fn charset_address(&self) -> u32 {
        let r = |addr: u16| self.io_regs[reg(addr)] as u32;
        r(vic::CHARPTR) | r(vic::CHARPTR + 1) << 8 | r(vic::CHARPTR + 2) << 16
    }

    /// The internal character ROM's set the VIC-IV uses, if CHARPTR points at it: Some(false)
    /// upper case, Some(true) lower case.
    fn rom_charset(&self) -> Option<bool> {
        let a = self.charset_address() & 0xF_FFFF;
        matches!(a >> 12, 0x01 | 0x09).then_some(a & 0x800 != 0)
    }

    /// The 8 bytes of glyph `code` in a RAM character set (chip RAM; 0 beyond it).
    fn ram_glyph(&self, code: u8) -> [u8; 8] {
        let base = (self.charset_address() & 0xF_FFFF) + code as u32 * 8;
        let mut g = [0u8; 8];
        for (r, b) in g.iter_mut().enumerate() {
            let a = base + r as u32;
            *b = if (a as usize) < CHIP_RAM_SIZE && !(0x1_F800..0x2_0000).contains(&a) {
                self.chip[a as usize]
            } else {
                0
            };
        }
        g
    }

    /// Every cell of the screen as its character and whether it shows in reverse video. In
    /// the internal character ROM, codes $80–$FF are the reversed glyphs of $00–$7F (the C64
    /// and C65 character ROMs, which the MEGA65's CHARROM holds); in a RAM character set a
    /// glyph whose bits are the inverse of a known glyph is that character reversed (how the
    /// MEGA65 program draws its cursor and the model browser's highlight, mega65/src/screen.c).
    pub fn screen_cells(&mut self) -> Vec<Vec<(char, bool)>> {
        let rom = self.rom_charset();
        let known: HashMap<[u8; 8], (char, bool)> = FONT
            .iter()
            .enumerate()
            .flat_map(|(i, g)| {
                let c = (b' ' + i as u8) as char;
                [(*g, (c, false)), (g.map(|b| !b), (c, true))]
            })
            .collect();
        let codes = self.screen_codes();
        codes
            .iter()
            .map(|row| {
                row.iter()
                    .map(|&c| match rom {
                        Some(true) => (screen_code_char(c), c & 0x80 != 0),
                        Some(false) => (screen_code_char_upper(c), c & 0x80 != 0),
                        None => *known.get(&self.ram_glyph(c)).unwrap_or(&('▒', false)),
                    })
                    .collect()
            })
            .collect()
    }

    /// The screen as text: trailing spaces and empty trailing lines removed (as xemu's dump).
    pub fn screen_text(&mut self) -> String {
        let mut lines: Vec<String> = self
            .screen_cells()
            .iter()
            .map(|row| {
                let s: String = row.iter().map(|&(c, _)| c).collect();
                s.trim_end().to_string()
            })
            .collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }

    /// The screen as an RGB PNG: 16-pixel border, 8×8 cells, colours from colour RAM; one PNG
    /// pixel per VIC pixel (the MEGA65 shows them wider or taller: see [`Self::pixel_aspect`]).
    pub fn screen_png(&mut self) -> Vec<u8> {
        self.screen_png_scaled(1, 1)
    }

    /// How many PNG pixels across and down one VIC pixel is on the MEGA65's display, from $D031
    /// (H640 bit 7, V400 bit 3; iomap.txt $D031.7/.3). The VIC-IV draws a fixed 800×600 frame:
    /// H640 pixels are the real pixel width, H320 ones twice as wide ("real pixels are
    /// H640/800", viciv.vhdl line 1388), and without V400 every text pixel row is drawn twice
    /// (chargen_y_scale_200 = 2 and text_height_200 = 400, viciv.vhdl lines 1364-1366).
    pub fn pixel_aspect(&self) -> (u32, u32) {
        let d031 = self.io_regs[reg(vic::CONTROL_B)];
        (
            if d031 & vic::CONTROL_B_H640 != 0 {
                1
            } else {
                2
            },
            if d031 & vic::CONTROL_B_V400 != 0 {
                1
            } else {
                2
            },
        )
    }

    /// The screen as a PNG in the MEGA65's pixel aspect ([`Self::pixel_aspect`]): 80×25 text
    /// (H640, V200) becomes 672×464 with the border, in the shape it has on the display.
    pub fn screen_png_aspect(&mut self) -> Vec<u8> {
        let (sx, sy) = self.pixel_aspect();
        self.screen_png_scaled(sx, sy)
    }

    /// [`Self::screen_png`] with each pixel drawn `sx` × `sy` times (the border too).
    fn screen_png_scaled(&mut self, sx: u32, sy: u32) -> Vec<u8> {
        let g = self.screen_geometry();
        let codes = self.screen_codes();
        let rom = self.rom_charset();
        let w = g.cols * 8 + 2 * BORDER;
        let h = g.rows * 8 + 2 * BORDER;
        let border = PALETTE[(self.io_regs[reg(vic::BORDER)] & 0x0F) as usize];
        let background = PALETTE[(self.io_regs[reg(vic::BACKGROUND)] & 0x0F) as usize];
        let mut px = vec![0u8; (w * h * 3) as usize];
        for chunk in px.chunks_mut(3) {
            chunk.copy_from_slice(&border);
        }
        for (row, line) in codes.iter().enumerate() {
            for (col, &code) in line.iter().enumerate() {
                let cell = g.colour_offset + row as u32 * g.step + col as u32;
                let fg = PALETTE[(self.read_phys(COLOUR_RAM_BASE + cell) & 0x0F) as usize];
                let (fg, bg) = if code & 0x80 != 0 && rom.is_some() {
                    (background, fg)
                } else {
                    (fg, background)
                };
                let glyph = match rom {
                    Some(true) => glyph_for(screen_code_char(code)),
                    Some(false) => glyph_for(screen_code_char_upper(code)),
                    // A RAM character set: its bytes as they are; reverse video is already in
                    // the glyphs (codes $80–$FF are glyphs of their own).
                    None => self.ram_glyph(code),
                };
                for y in 0..8u32 {
                    for x in 0..8u32 {
                        let on = glyph[y as usize] & (0x80 >> x) != 0;
                        let px_x = BORDER + col as u32 * 8 + x;
                        let px_y = BORDER + row as u32 * 8 + y;
                        let i = ((px_y * w + px_x) * 3) as usize;
                        px[i..i + 3].copy_from_slice(if on { &fg } else { &bg });
                    }
                }
            }
        }
        let (px, w, h) = if (sx, sy) == (1, 1) {
            (px, w, h)
        } else {
            let (sw, sh) = (w * sx, h * sy);
            let mut big = vec![0u8; (sw * sh * 3) as usize];
            for y in 0..sh {
                for x in 0..sw {
                    let from = (((y / sy) * w + x / sx) * 3) as usize;
                    let to = ((y * sw + x) * 3) as usize;
                    big[to..to + 3].copy_from_slice(&px[from..from + 3]);
                }
            }
            (big, sw, sh)
        };
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, w, h);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut writer = enc.write_header().expect("PNG header into memory");
            writer.write_image_data(&px).expect("PNG data into memory");
        }
        out
    }
}

/// Glyph for a character: the font for ASCII, a few shapes for the rest.
fn glyph_for(c: char) -> [u8; 8] {
    match c {
        ' '..='~' => FONT[c as usize - 32],
        '─' => [0, 0, 0, 0xFF, 0, 0, 0, 0],
        '│' => [0x10; 8],
        '┼' => [0x10, 0x10, 0x10, 0xFF, 0x10, 0x10, 0x10, 0x10],
        '£' => [0x1C, 0x22, 0x20, 0x78, 0x20, 0x20, 0x7E, 0],
        '↑' => [0x10, 0x38, 0x54, 0x10, 0x10, 0x10, 0x10, 0],
        '←' => [0, 0x10, 0x20, 0x7E, 0x20, 0x10, 0, 0],
        _ => [0xAA, 0x55, 0xAA, 0x55, 0xAA, 0x55, 0xAA, 0x55],
    }
}

#[cfg(test)]
mod tests {
    use super::super::machine::Machine;
    use super::{reg, vic};

    /// 80 columns at 200 lines (the start-up mode, $D031 = $E0): pixels twice as tall as wide;
    /// H320 doubles the width too; V400 leaves rows single (viciv.vhdl 1364-1366, 1388).
    #[test]
    fn the_png_follows_the_mega65_pixel_aspect() {
        let mut m = Machine::new();
        assert_eq!(m.pixel_aspect(), (1, 2));
        let size = |png: Vec<u8>| {
            (
                u32::from_be_bytes(png[16..20].try_into().unwrap()),
                u32::from_be_bytes(png[20..24].try_into().unwrap()),
            )
        };
        assert_eq!(size(m.screen_png()), (80 * 8 + 32, 25 * 8 + 32));
        assert_eq!(
            size(m.screen_png_aspect()),
            (80 * 8 + 32, (25 * 8 + 32) * 2)
        );
        m.io_regs[reg(vic::CONTROL_B)] = 0x00; // H320, V200
        assert_eq!(m.pixel_aspect(), (2, 2));
        m.io_regs[reg(vic::CONTROL_B)] = 0x88; // H640, V400
        assert_eq!(m.pixel_aspect(), (1, 1));
    }
}
