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
pub fn generated_files() -> [(&'static str, &'static str, String); 4] {
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
    ]
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

/// The whole header text.
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

    line("SS_BLOCK", hex32(regs::BLOCK_BASE), "register 0");
    let r = |off: u8| format!("(SS_BLOCK + 0x{off:02X})");
    line(
        "SS_ID",
        r(reg::ID),
        "reads SS_ID_VALUE when the core is present",
    );
    line("SS_VERSION", r(reg::VERSION), "");
    line("SS_CAPS", r(reg::CAPS), "SS_CAP_* bits");
    line("SS_GO", r(reg::GO), "write SS_GO_START");
    line("SS_STATUS", r(reg::STATUS), "SS_STATUS_* bits");
    line("SS_ERROR", r(reg::ERROR), "SS_ERR_* after a faulted job");
    line("SS_MEM_MB", r(reg::MEM_MB), "");
    line("SS_JOB0", r(reg::JOB0), "job pointer, 4 bytes LE");
    line(
        "SS_FAULT_PC0",
        r(reg::FAULT_PC0),
        "PC of the last fault, 4 bytes LE",
    );
    line("SS_HYPERRAM_MB", r(reg::HYPERRAM_MB), "");
    line("SS_SDRAM_BASE", r(reg::SDRAM_BASE), "in MB units");
    line("SS_SDRAM_MB", r(reg::SDRAM_MB), "");
    line("SS_HYPERRAM_BASE", r(reg::HYPERRAM_BASE), "in MB units");
    line(
        "SS_LP_PTR0",
        r(reg::LP_PTR0),
        "load pointer bits 0-23 (3 bytes)",
    );
    line(
        "SS_LP_COMMIT",
        r(reg::LP_COMMIT),
        "write: bits 24-27 + commit",
    );
    line("SS_LP_DATA", r(reg::LP_DATA), "");
    line("SS_ID_VALUE", hex2(regs::ID_VALUE), "");
    line(
        "SS_CAP_SDRAM",
        hex2(regs::CAP_SDRAM),
        "the RAM at $8000000 is SDRAM",
    );
    line("SS_CAP_HYPERRAM", hex2(regs::CAP_HYPERRAM), "");
    line("SS_CAP_EMULATOR", hex2(regs::CAP_EMULATOR), "");
    line("SS_GO_START", hex2(regs::GO_START), "");
    line("SS_STATUS_BUSY", hex2(regs::STATUS_BUSY), "");
    line("SS_STATUS_FAULT", hex2(regs::STATUS_FAULT), "");
    line("SS_LP_READY", hex2(regs::LP_READY), "read");
    line("SS_LP_ERROR", hex2(regs::LP_ERROR), "read");
    line("SS_LP_CLEAR_ERROR", hex2(regs::LP_CLEAR_ERROR), "write");
    line("SS_LP_PTR_HIGH", hex2(regs::LP_PTR_HIGH_MASK), "bits 24-27");
    for (name, v) in [
        ("SS_ERR_NONE", error::NONE),
        ("SS_ERR_ILLEGAL_OPCODE", error::ILLEGAL_OPCODE),
        ("SS_ERR_MISALIGNED_PC", error::MISALIGNED_PC),
        ("SS_ERR_ADDRESS", error::ADDRESS),
        ("SS_ERR_INSTR_LIMIT", error::INSTRUCTION_LIMIT),
        ("SS_ERR_BAD_OPERAND", error::BAD_OPERAND),
    ] {
        line(name, v.to_string(), "");
    }
    line(
        "SS_INSTR_LIMIT",
        format!("{}UL", regs::DEFAULT_INSTR_LIMIT),
        "instructions per job on the software core (code 4 after)",
    );

    line(
        "IMG_BASE",
        hex32(image::BASE),
        "header; SSNAIL memory starts here",
    );
    line("IMG_HEADER_LEN", format!("0x{:X}", image::HEADER_LEN), "");
    let magic = std::str::from_utf8(image::MAGIC).unwrap();
    line("IMG_MAGIC", format!("\"{magic}\""), "4 bytes at H_MAGIC");
    line("IMG_VERSION", image::VERSION.to_string(), "");
    line(
        "IMG_FLAG_ENCODER",
        image::FLAG_ENCODER.to_string(),
        "H_FLAGS bit",
    );
    line("IMG_OUTPUT_AREA", hex32(image::OUTPUT_AREA), "");
    line("IMG_TOKENS", hex32(image::TOKENS), "token buffer, u32 each");
    line("IMG_TOKEN_SLOTS", image::TOKEN_SLOTS.to_string(), "");
    line(
        "IMG_MAX_CTX",
        image::MAX_CTX.to_string(),
        "largest context (H_MAXCTX)",
    );
    line("IMG_PAYLOAD_BASE", hex32(image::PAYLOAD_BASE), "");
    line("IMG_HYPERRAM_BOUNDARY", hex32(image::HYPERRAM_BOUNDARY), "");
    for (name, v) in [
        ("H_MAGIC", h::MAGIC),
        ("H_VERSION", h::VERSION),
        ("H_FLAGS", h::FLAGS),
        ("H_CODE", h::CODE),
        ("H_DATA", h::DATA),
        ("H_SCRATCH", h::SCRATCH),
        ("H_TOKENS", h::TOKENS),
        ("H_VOCAB", h::VOCAB),
        ("H_NVOCAB", h::NVOCAB),
        ("H_MAXCTX", h::MAXCTX),
        ("H_BOS", h::BOS),
        ("H_EOS", h::EOS),
        ("H_PAYLOAD_LEN", h::PAYLOAD_LEN),
        ("H_OUTPUT", h::OUTPUT),
        ("H_OUTDIM", h::OUTDIM),
        ("H_MEM_NEEDED", h::MEM_NEEDED),
        ("H_ARCH", h::ARCH),
        ("H_REGIONS", h::REGIONS),
        ("H_LOAD_BASE", h::LOAD_BASE),
        ("H_HOST_BASE", h::HOST_BASE),
        ("H_HOST_SEG_LEN", h::HOST_LEN),
        ("H_TOKENIZER", h::TOKENIZER),
        ("H_CHAT", h::CHAT),
        ("H_DESC", h::DESC),
        ("H_DESC_LEN", h::DESC_LEN),
    ] {
        line(name, format!("0x{v:02X}"), "");
    }
    for (name, v) in [
        ("ARCH_LLAMA", Arch::Llama),
        ("ARCH_GPT2", Arch::Gpt2),
        ("ARCH_BERT", Arch::Bert),
    ] {
        line(name, (v as u32).to_string(), "H_ARCH");
    }
    for (name, v) in [
        ("RB_POS", rt::POS),
        ("RB_PROMPT_LEN", rt::PROMPT_LEN),
        ("RB_N_GENERATE", rt::N_GENERATE),
        ("RB_GENERATED", rt::GENERATED),
        ("RB_STOP_REQUEST", rt::STOP_REQUEST),
        ("RB_STOP_REASON", rt::STOP_REASON),
    ] {
        line(name, format!("0x{v:02X}"), "runtime block, from IMG_BASE");
    }
    for (name, v) in [
        ("STOP_COUNT", stop::COUNT),
        ("STOP_EOS", stop::EOS),
        ("STOP_CONTEXT_FULL", stop::CONTEXT_FULL),
        ("STOP_REQUESTED", stop::REQUESTED),
    ] {
        line(name, v.to_string(), "RB_STOP_REASON");
    }
    line(
        "TB_LEN",
        tokblock::TOKBLOCK_LEN.to_string(),
        "tokenizer block at H_TOKENIZER",
    );
    for (name, v) in [
        ("TB_KIND", tb::KIND),
        ("TB_FLAGS", tb::FLAGS),
        ("TB_N_VOCAB", tb::N_VOCAB),
        ("TB_INDEX", tb::INDEX),
        ("TB_INDEX_LEN", tb::INDEX_LEN),
        ("TB_PRIORITY", tb::PRIORITY),
        ("TB_BYTE_TABLE", tb::BYTE_TABLE),
        ("TB_BEGIN", tb::BEGIN),
        ("TB_END", tb::END),
        ("TB_UNK", tb::UNK),
    ] {
        line(name, v.to_string(), "");
    }
    line("TF_LOWERCASE", hex2(tokblock::TF_LOWERCASE), "TB_FLAGS");
    line("TF_PRIO32", hex2(tokblock::TF_PRIO32), "TB_FLAGS");
    line(
        "TOK_SPM",
        (tokblock::TokKind::Spm as u8).to_string(),
        "TB_KIND",
    );
    line(
        "TOK_BPE",
        (tokblock::TokKind::Bpe as u8).to_string(),
        "TB_KIND",
    );
    line(
        "TOK_WORDPIECE",
        (tokblock::TokKind::WordPiece as u8).to_string(),
        "TB_KIND",
    );
    line(
        "CB_MAX_SEQ",
        chatblock::MAX_SEQ.to_string(),
        "chat block at H_CHAT: most tokens per sequence",
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
        ("CB_N_FIRST", cb::N_FIRST),
        ("CB_N_PREFIX", cb::N_PREFIX),
        ("CB_N_SUFFIX", cb::N_SUFFIX),
        ("CB_N_END", cb::N_END),
        ("CB_NAME", cb::NAME),
        ("CB_IDS", cb::IDS),
    ] {
        line(name, v.to_string(), "");
    }
    line("TOK_NONE", hex32(tokblock::NONE32), "no token (u32 tables)");
    line(
        "TOK_NONE16",
        format!("0x{:04X}", tokblock::NONE16),
        "no priority (u16 table)",
    );

    format!(
        "/* ssnail_regs.h: the SSNAIL contract for C — register block, image header, runtime block,\n \
         * stop reasons, tokenizer block (docs/spec/registers.md, docs/spec/image.md).\n \
         * GENERATED from the ssnail-format crate (format/src/c_header.rs); do not edit. Regenerate:\n \
         *   cargo run -q -p ssnail-format --example c_header > mega65/include/ssnail_regs.h */\n\
         #ifndef SSNAIL_REGS_H\n#define SSNAIL_REGS_H\n{o}#define HDR(off)             (IMG_BASE + (off))\n#endif\n"
    )
}
