//! The contract as a C header for the MEGA65 program (mega65/include/ssnail_regs.h).
//!
//! The C side has no copy of its own: the header is generated from the constants
//! of this crate, checked in, and a test regenerates it and compares
//! (format/tests/generated_files.rs, with every other generated file). To regenerate after a change here:
//!
//! ```text
//! cargo run -q -p ssnail-format --example c_header > mega65/include/ssnail_regs.h
//! ```

use crate::chatblock::{self, cb};
use crate::image::{self, h, rt, stop, Arch};
use crate::registers::{self as regs, error, reg};
use crate::tokblock::{self, tb};
use std::fmt::Write;

/// Every file this crate generates: its path from the repository root, the example that prints
/// it and its text. format/tests/generated_files.rs regenerates them all and compares.
pub fn generated_files() -> [(&'static str, &'static str, String); 8] {
    [
        ("mega65/include/ssnail_regs.h", "c_header", c_header()),
        (
            "mega65/include/sampler_tables.h",
            "sampler_tables",
            crate::sampler::c_tables(),
        ),
        (
            "mega65/include/ssnail_regs.inc",
            "c_header -- --ca65",
            ca65_include(),
        ),
        (
            "mega65/include/mega65_io.h",
            "mega65_io",
            crate::mega65::c_header(),
        ),
        (
            "mega65/include/mega65_io.inc",
            "mega65_io -- --ca65",
            crate::mega65::ca65_include(),
        ),
        (
            "mega65/softcore/fn_tables.h",
            "fn_tables",
            crate::softcore::c_header(),
        ),
        (
            "mega65/softcore/fn_tables.inc",
            "fn_tables -- --ca65",
            crate::softcore::ca65_include(),
        ),
        (
            "emu/capi/include/ssnail_defaults.h",
            "c_header -- --capi",
            capi_defaults(),
        ),
    ]
}

/// The C library's defaults and addresses for its hosts (emu/capi/include/ssnail_defaults.h,
/// included by ssnail.h; the xemu patch's -ssnailmbps default and where it puts the core): the
/// name is `SSNAIL_` and the Rust name. Regenerate with
/// `cargo run -q -p ssnail-format --example c_header -- --capi`.
pub fn capi_defaults() -> String {
    format!(
        "/* ssnail_defaults.h: the SSNAIL C library's defaults and addresses for its hosts (ssnail.h, the\n \
         * xemu patch).\n \
         * GENERATED from the ssnail-format crate (format/src/c_header.rs); do not edit. Regenerate:\n \
         *   cargo run -q -p ssnail-format --example c_header -- --capi > emu/capi/include/ssnail_defaults.h */\n\
         #ifndef SSNAIL_DEFAULTS_H\n#define SSNAIL_DEFAULTS_H\n\
         /* SSNAIL memory bandwidth in MB/s the job clock assumes unless told otherwise */\n\
         #define SSNAIL_DEFAULT_BANDWIDTH_MBPS {:?}\n\
         /* the register block's 28-bit address (spec §9.2; registers::BLOCK) */\n\
         #define SSNAIL_REGISTER_BLOCK 0x{:08X}U\n\
         /* SSNAIL memory's first address, the attic RAM window's (spec §2; image::BASE) */\n\
         #define SSNAIL_MEMORY_BASE 0x{:08X}U\n#endif\n",
        regs::DEFAULT_BANDWIDTH_MBPS,
        regs::BLOCK,
        image::BASE
    )
}

/// The same constants for ca65 (mega65/include/ssnail_regs.inc): every numeric `#define` of
/// [`c_header`] as `NAME = value`, so the program's assembly uses the contract's numbers too.
/// Regenerate with `cargo run -q -p ssnail-format --example c_header -- --ca65`.
pub fn ca65_include() -> String {
    let mut o = String::from(
        "; ssnail_regs.inc: the SSNAIL contract for ca65, the numeric constants of ssnail_regs.h.\n\
         ; GENERATED from the ssnail-format crate (format/src/c_header.rs); do not edit. Regenerate:\n\
         ;   cargo run -q -p ssnail-format --example c_header -- --ca65 > mega65/include/ssnail_regs.inc\n",
    );
    for l in c_header().lines() {
        let Some(def) = l.strip_prefix("#define ") else {
            continue;
        };
        let (name, rest) = def.split_once(' ').unwrap_or((def, ""));
        let (value, comment) = match rest.split_once("/*") {
            Some((v, c)) => (v.trim(), c.trim_end_matches("*/").trim()),
            None => (rest.trim(), ""),
        };
        // Strings and function-like macros have no ca65 constant form.
        if name.contains('(') || value.starts_with('"') || name.ends_with("_H") || value.is_empty()
        {
            continue;
        }
        let value = value.replace("0x", "$").replace("UL", "");
        let text = if comment.is_empty() {
            format!("{name:<21} = {value}")
        } else {
            format!("{name:<21} = {value:<18} ; {comment}")
        };
        writeln!(o, "{}", text.trim_end()).unwrap();
    }
    o
}

/// The last segment of a path, as text.
macro_rules! last {
    ($x:ident) => {
        stringify!($x)
    };
    ($x:ident :: $($rest:ident)::+) => {
        last!($($rest)::+)
    };
}
/// `(name, value)` of a constant as every language calls it: the prefix and its Rust name.
macro_rules! def {
    ($prefix:literal, $($seg:ident)::+) => {
        (format!("{}{}", $prefix, last!($($seg)::+)), $($seg)::+)
    };
}
/// `(name, value)` of an enum variant: the prefix and the variant's name in capitals.
macro_rules! variant {
    ($prefix:literal, $($seg:ident)::+) => {
        (
            format!("{}{}", $prefix, last!($($seg)::+).to_uppercase()),
            $($seg)::+,
        )
    };
}
/// One `#define` of a constant by [`def!`]'s name, its value written by `$fmt`.
macro_rules! put {
    ($line:ident, $prefix:literal, $($seg:ident)::+, $fmt:expr, $comment:expr) => {{
        let (name, value) = def!($prefix, $($seg)::+);
        $line(&name, $fmt(value), $comment)
    }};
}

fn dec<T: std::fmt::Display>(v: T) -> String {
    v.to_string()
}
fn hexn(v: usize) -> String {
    format!("0x{v:X}")
}
fn hex4(v: u16) -> String {
    format!("0x{v:04X}")
}
fn ul(v: u64) -> String {
    format!("{v}UL")
}

/// The whole header text. Every name is the prefix of its subject (`SS_`, `IMG_`, `H_`, `RB_`,
/// `STOP_`, `TB_`, `CB_`, ...) and the Rust name of its constant ([`def!`], [`variant!`]).
pub fn c_header() -> String {
    let mut o = String::new();
    let mut line = |name: &str, value: String, comment: &str| {
        let text = if comment.is_empty() {
            format!("#define {name:<20} {value}")
        } else {
            format!("#define {name:<20} {value:<14} /* {comment} */")
        };
        writeln!(o, "{}", text.trim_end()).unwrap();
    };
    let hex2 = |v: u8| format!("0x{v:02X}");
    let hex32 = |v: u32| format!("0x{v:08X}UL");

    put!(line, "SS_", regs::BLOCK, hex32, "register 0");
    let r = |off: u8| format!("(SS_BLOCK + 0x{off:02X})");
    put!(
        line,
        "SS_",
        reg::ID,
        r,
        "reads SS_ID_VALUE when the core is present"
    );
    put!(line, "SS_", reg::VERSION, r, "");
    put!(line, "SS_", reg::CAPS, r, "SS_CAP_* bits");
    put!(line, "SS_", reg::GO, r, "write SS_GO_START");
    put!(line, "SS_", reg::STATUS, r, "SS_STATUS_* bits");
    put!(line, "SS_", reg::ERROR, r, "SS_ERR_* after a faulted job");
    put!(line, "SS_", reg::MEM_MB, r, "");
    put!(line, "SS_", reg::JOB0, r, "job pointer, 4 bytes LE");
    put!(
        line,
        "SS_",
        reg::FAULT_PC0,
        r,
        "PC of the last fault, 4 bytes LE"
    );
    put!(line, "SS_", reg::HYPERRAM_MB, r, "");
    put!(line, "SS_", reg::SDRAM_BASE, r, "in MB units");
    put!(line, "SS_", reg::SDRAM_MB, r, "");
    put!(line, "SS_", reg::HYPERRAM_BASE, r, "in MB units");
    put!(
        line,
        "SS_",
        reg::LP_PTR0,
        r,
        "load pointer bits 0-23 (3 bytes)"
    );
    put!(line, "SS_", reg::LP_COMMIT, r, "write: bits 24-27 + commit");
    put!(line, "SS_", reg::LP_DATA, r, "");
    put!(line, "SS_", regs::ID_VALUE, hex2, "");
    put!(
        line,
        "SS_",
        regs::CAP_SDRAM,
        hex2,
        "the RAM at $8000000 is SDRAM"
    );
    put!(line, "SS_", regs::CAP_HYPERRAM, hex2, "");
    put!(line, "SS_", regs::CAP_EMULATOR, hex2, "");
    put!(line, "SS_", regs::GO_START, hex2, "");
    put!(line, "SS_", regs::STATUS_BUSY, hex2, "");
    put!(line, "SS_", regs::STATUS_FAULT, hex2, "");
    put!(line, "SS_", regs::LP_READY, hex2, "read");
    put!(line, "SS_", regs::LP_ERROR, hex2, "read");
    put!(line, "SS_", regs::LP_CLEAR_ERROR, hex2, "write");
    put!(line, "SS_", regs::LP_PTR_HIGH, hex2, "bits 24-27");
    for (name, v) in [
        def!("SS_ERR_", error::NONE),
        def!("SS_ERR_", error::ILLEGAL_OPCODE),
        def!("SS_ERR_", error::MISALIGNED_PC),
        def!("SS_ERR_", error::ADDRESS),
        def!("SS_ERR_", error::INSTR_LIMIT),
        def!("SS_ERR_", error::BAD_OPERAND),
    ] {
        line(&name, v.to_string(), "");
    }
    put!(
        line,
        "SS_",
        regs::INSTR_LIMIT,
        ul,
        "instructions per job on the software core (code 4 after)"
    );

    put!(
        line,
        "IMG_",
        image::BASE,
        hex32,
        "header; SSNAIL memory starts here"
    );
    put!(line, "IMG_", image::HEADER_LEN, hexn, "");
    let magic = std::str::from_utf8(image::MAGIC).unwrap();
    line(
        &def!("IMG_", image::MAGIC).0,
        format!("\"{magic}\""),
        "4 bytes at H_MAGIC",
    );
    put!(line, "IMG_", image::VERSION, dec, "");
    put!(line, "IMG_", image::FLAG_ENCODER, dec, "H_FLAGS bit");
    put!(
        line,
        "IMG_",
        image::ANSWER_TOKENS,
        hex32,
        "H_ANSWER bits: tokens per answer"
    );
    put!(
        line,
        "IMG_",
        image::ANSWER_GREEDY,
        hex32,
        "H_ANSWER bit: greedy"
    );
    put!(line, "IMG_", image::OUTPUT_AREA, hex32, "");
    put!(line, "IMG_", image::TOKENS, hex32, "token buffer, u32 each");
    put!(line, "IMG_", image::TOKEN_SLOTS, dec, "");
    put!(
        line,
        "IMG_",
        image::MAX_CTX,
        dec,
        "largest context (H_MAXCTX)"
    );
    put!(line, "IMG_", image::PAYLOAD_BASE, hex32, "");
    put!(line, "IMG_", image::HYPERRAM_BOUNDARY, hex32, "");
    for (name, v) in [
        def!("H_", h::MAGIC),
        def!("H_", h::VERSION),
        def!("H_", h::FLAGS),
        def!("H_", h::CODE),
        def!("H_", h::DATA),
        def!("H_", h::SCRATCH),
        def!("H_", h::TOKENS),
        def!("H_", h::VOCAB),
        def!("H_", h::NVOCAB),
        def!("H_", h::MAXCTX),
        def!("H_", h::BOS),
        def!("H_", h::EOS),
        def!("H_", h::PAYLOAD_LEN),
        def!("H_", h::OUTPUT),
        def!("H_", h::OUTDIM),
        def!("H_", h::MEM_NEEDED),
        def!("H_", h::ARCH),
        def!("H_", h::REGIONS),
        def!("H_", h::LOAD_BASE),
        def!("H_", h::HOST_BASE),
        def!("H_", h::HOST_SEG_LEN),
        def!("H_", h::TOKENIZER),
        def!("H_", h::CHAT),
        def!("H_", h::ANSWER),
        def!("H_", h::DESC),
        def!("H_", h::DESC_LEN),
    ] {
        line(&name, format!("0x{v:02X}"), "");
    }
    for (name, v) in [
        variant!("ARCH_", Arch::Llama),
        variant!("ARCH_", Arch::Gpt2),
        variant!("ARCH_", Arch::Bert),
    ] {
        line(&name, (v as u32).to_string(), "H_ARCH");
    }
    for (name, v) in [
        def!("RB_", rt::POS),
        def!("RB_", rt::PROMPT_LEN),
        def!("RB_", rt::N_GENERATE),
        def!("RB_", rt::GENERATED),
        def!("RB_", rt::STOP_REQUEST),
        def!("RB_", rt::STOP_REASON),
    ] {
        line(&name, format!("0x{v:02X}"), "runtime block, from IMG_BASE");
    }
    for (name, v) in [
        def!("STOP_", stop::COUNT),
        def!("STOP_", stop::EOS),
        def!("STOP_", stop::CONTEXT_FULL),
        def!("STOP_", stop::REQUESTED),
    ] {
        line(&name, v.to_string(), "RB_STOP_REASON");
    }
    put!(
        line,
        "TB_",
        tokblock::tb::LEN,
        dec,
        "tokenizer block at H_TOKENIZER"
    );
    for (name, v) in [
        def!("TB_", tb::KIND),
        def!("TB_", tb::FLAGS),
        def!("TB_", tb::N_VOCAB),
        def!("TB_", tb::INDEX),
        def!("TB_", tb::INDEX_LEN),
        def!("TB_", tb::PRIORITY),
        def!("TB_", tb::BYTE_TABLE),
        def!("TB_", tb::BEGIN),
        def!("TB_", tb::END),
        def!("TB_", tb::UNK),
    ] {
        line(&name, v.to_string(), "");
    }
    put!(line, "", tokblock::TF_LOWERCASE, hex2, "TB_FLAGS");
    put!(line, "", tokblock::TF_PRIO32, hex2, "TB_FLAGS");
    let (n, v) = variant!("TOK_", tokblock::TokKind::Spm);
    line(&n, (v as u8).to_string(), "TB_KIND");
    let (n, v) = variant!("TOK_", tokblock::TokKind::Bpe);
    line(&n, (v as u8).to_string(), "TB_KIND");
    let (n, v) = variant!("TOK_", tokblock::TokKind::WordPiece);
    line(&n, (v as u8).to_string(), "TB_KIND");
    put!(
        line,
        "CB_",
        chatblock::MAX_SEQ,
        dec,
        "chat block at H_CHAT: most tokens per sequence"
    );
    line(
        "CB_MAGIC_WORD",
        hex32(u32::from_le_bytes(*chatblock::MAGIC)),
        "chat block's first 4 bytes (\"CHAT\") as a little-endian word",
    );
    line(
        "CB_NAME_LEN",
        chatblock::NAME_LEN.to_string(),
        "bytes of the template family's name at CB_NAME",
    );
    for (name, v) in [
        def!("CB_", cb::N_FIRST),
        def!("CB_", cb::N_PREFIX),
        def!("CB_", cb::N_SUFFIX),
        def!("CB_", cb::N_END),
        def!("CB_", cb::NAME),
        def!("CB_", cb::IDS),
    ] {
        line(&name, v.to_string(), "");
    }
    put!(line, "", tokblock::TOK_NONE, hex32, "no token (u32 tables)");
    put!(
        line,
        "",
        tokblock::TOK_NONE16,
        hex4,
        "no priority (u16 table)"
    );

    format!(
        "/* ssnail_regs.h: the SSNAIL contract for C — register block, image header, runtime block,\n \
         * stop reasons, tokenizer block (docs/spec/registers.md, docs/spec/image.md).\n \
         * GENERATED from the ssnail-format crate (format/src/c_header.rs); do not edit. Regenerate:\n \
         *   cargo run -q -p ssnail-format --example c_header > mega65/include/ssnail_regs.h */\n\
         #ifndef SSNAIL_REGS_H\n#define SSNAIL_REGS_H\n{o}#define HDR(off)             (IMG_BASE + (off))\n#endif\n"
    )
}
