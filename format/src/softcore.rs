//! The numbers the MEGA65's software SSNAIL core (mega65/softcore) takes from the Rust definitions
//! instead of retyping them, generated as `mega65/softcore/fn_tables.h` ([`c_header`]) and
//! `mega65/softcore/fn_tables.inc` ([`ca65_include`]) with the same names: the ISA's opcodes,
//! operand bits and ATTN parameter block ([`crate::isa::groups`]), the native weight formats
//! (ggml type numbers and block sizes, spec §4.1) and, in the C header only, the exp, SiLU and
//! GELU tables of [`crate::tables`] (spec §5.3: the hardware must hold exactly these
//! coefficients). To regenerate after a change:
//!
//! ```text
//! cargo run -q -p ssnail-format --example fn_tables > mega65/softcore/fn_tables.h
//! cargo run -q -p ssnail-format --example fn_tables -- --ca65 > mega65/softcore/fn_tables.inc
//! ```

use crate::facts::{self, Group, Radix};
use crate::ggml::GgmlType;
use crate::tables::{self, Outside, Table};
use std::fmt::Write;

/// The native weight formats (§4.1).
pub const WEIGHT_FORMATS: [GgmlType; 5] = [
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::Bf16,
    GgmlType::Q8_0,
    GgmlType::Q4_0,
];

/// The weight formats as data: `WT_<NAME>` (the ggml type number, GEMV/DEQROW's a) and its
/// elements and bytes per block.
fn weight_formats() -> Group {
    let mut g = Group::new(
        "WT_",
        "docs/spec/numerics.md §4.1: weight formats (GEMV/DEQROW a: ggml type numbers), elements and bytes per block",
        Radix::Decimal,
    );
    for t in WEIGHT_FORMATS {
        assert!(t.is_native());
        let n = t.name().to_uppercase();
        g = g
            .fact(&n, t as u64, "ggml type number")
            .fact(
                &format!("{n}_BLOCK_LEN"),
                t.block_len() as u64,
                "elements per block",
            )
            .fact(
                &format!("{n}_BLOCK_BYTES"),
                t.block_bytes() as u64,
                "bytes per block",
            );
    }
    g
}

/// What a table gives outside `[lo, hi)`: `FN_OUT_` and the [`Outside`] variant.
fn outside_group() -> Group {
    Group::new(
        "FN_OUT_",
        "docs/spec/numerics.md §5.3: what a table gives outside [lo, hi)",
        Radix::Decimal,
    )
    .fact("ZERO", Outside::Zero as u64, "+0")
    .fact("ONE", Outside::One as u64, "1")
    .fact("IDENTITY", Outside::Identity as u64, "x")
}

fn outside(o: Outside) -> &'static str {
    match o {
        Outside::Zero => "FN_OUT_ZERO",
        Outside::One => "FN_OUT_ONE",
        Outside::Identity => "FN_OUT_IDENTITY",
    }
}

/// The exact sum's accumulator (mega65/softcore/exactsum.c): a two's-complement integer in units
/// of 2^−298 (the lowest bit of the smallest product, 2^−149 · 2^−149). A product of two finite
/// singles is below 2^256, so it ends below bit 298 + 256 = 554; 37 bits above that and the sign
/// hold any sum of fewer than 2^36 products.
pub const XS_BITS: u64 = 298 + 256 + 37 + 1;

/// `XS_`: the exact sum's accumulator and its products that are not finite (exactsum.c, exactadd.c,
/// exactsum65.s, exactround65.s).
fn exact_sum() -> Group {
    assert_eq!(XS_BITS % 8, 0);
    Group::new(
        "XS_",
        "mega65/softcore/exactsum.c: the exact sum's accumulator (bytes) and its non-finite products (bits)",
        Radix::Decimal,
    )
    .fact("BYTES", XS_BITS / 8, "the accumulator, little-endian two's complement")
    .fact("PLUS_INF", 1, "a +inf product")
    .fact("MINUS_INF", 2, "a −inf product")
    .fact("NAN", 4, "a NaN product (or inf·0)")
}

/// `XR_`: the 45GS02 float GEMV's row pages (mega65/softcore/exactsum.h, exactsum65.s, softgemv.c).
/// A block of rows keeps each row in its own 256-byte page: the accumulator at offset 1 (so a
/// product whose lowest byte lies below the accumulator's, always a zero byte, has one), the next
/// row's page at LINK, the row's non-finite products at SPEC, the chunk's weights from W on.
fn row_pages() -> Group {
    let link = 1 + XS_BITS / 8;
    let w = link + 2;
    let (n, n32) = (64, (256 - w) / 4);
    assert!(w + 2 * n <= 256 && w + 4 * n32 <= 256);
    let (rows, urows) = (8, 5);
    Group::new(
        "XR_",
        "mega65/softcore/exactsum.h: the float GEMV's row pages (offsets in a 256-byte page) and blocks",
        Radix::Decimal,
    )
    .fact("ROWS", rows, "rows a block")
    .fact("UROWS", urows, "of them in the buffer union (the rest: the C stack's lowest pages)")
    .fact("SROWS", rows - urows, "of them at the C stack's lowest pages")
    .fact("DEPTH", 128, "the C stack's bytes above those pages that the stack rows need")
    .fact("N", n, "F16 and BF16 weights a chunk")
    .fact("N32", n32, "F32 weights a chunk")
    .fact("LINK", link, "the next row's page (high byte; 0 after the last)")
    .fact("SPEC", link + 1, "the row's non-finite products (XS_ bits)")
    .fact("W", w, "the chunk's weights")
}

/// Every group both fn_tables files hold, in their order.
pub fn groups() -> Vec<Group> {
    let mut g = crate::isa::groups();
    g.push(weight_formats());
    g.push(outside_group());
    g.push(exact_sum());
    g.push(row_pages());
    g
}

fn table(s: &mut String, name: &str, what: &str, t: &Table) {
    let up = name.to_uppercase();
    writeln!(s, "\n/* {what} */").unwrap();
    for (field, v) in [("LO", t.lo), ("HI", t.hi), ("K", t.k)] {
        writeln!(
            s,
            "#define FN_{up}_{field:<6} 0x{:08X}UL /* {v:?} */",
            v.to_bits()
        )
        .unwrap();
    }
    writeln!(s, "#define FN_{up}_BELOW  {}", outside(t.below)).unwrap();
    writeln!(s, "#define FN_{up}_ABOVE  {}", outside(t.above)).unwrap();
    writeln!(
        s,
        "#if defined(FN_TABLES_DATA) || defined(FN_{up}_DATA)\n\
         const uint32_t fn_{name}[512] = {{ /* c0, c1 of segment 0, 1, ... */"
    )
    .unwrap();
    for i in 0..256 {
        let sep = if i % 3 == 2 || i == 255 { ",\n" } else { ", " };
        write!(
            s,
            "{}0x{:08X}UL, 0x{:08X}UL{sep}",
            if i % 3 == 0 { "    " } else { "" },
            t.c0[i].to_bits(),
            t.c1[i].to_bits()
        )
        .unwrap();
    }
    writeln!(
        s,
        "}};\n#else\nextern const uint32_t fn_{name}[512];\n#endif"
    )
    .unwrap();
}

/// fn_tables.h's text.
pub fn c_header() -> String {
    let mut s = String::from(
        "/* fn_tables.h: the software SSNAIL core's numbers: ISA v1 (docs/spec/isa.md §3.2-§3.5), the\n \
         * weight formats (docs/spec/numerics.md §4.1) and the exp, SiLU and GELU tables (§5.3 there),\n \
         * singles as bit patterns. The tables' arrays are defined only where FN_TABLES_DATA (all three) or\n \
         * FN_EXP_DATA, FN_SILU_DATA, FN_GELU_DATA (that one) is defined before the include, once\n \
         * per program (softvec.c; fntab.c puts them in segments of their own in cc65 builds);\n \
         * the numbers and table bounds are for every file. fn_tables.inc has the numbers for ca65.\n \
         * GENERATED from the ssnail-format crate (format/src/softcore.rs); do not edit. Regenerate:\n \
         *   cargo run -q -p ssnail-format --example fn_tables > mega65/softcore/fn_tables.h */\n\
         #ifndef FN_TABLES_H\n#define FN_TABLES_H\n#include <stdint.h>\n",
    );
    facts::c_defines(&mut s, &groups(), 24);
    table(&mut s, "exp", "exp for softmax: [-16, 0)", tables::exp());
    table(
        &mut s,
        "silu",
        "SiLU x/(1 + e^-x): [-12, 12)",
        tables::silu(),
    );
    table(&mut s, "gelu", "GELU, tanh form: [-6, 6)", tables::gelu());
    s.push_str("#endif\n");
    s
}

/// fn_tables.inc's text: the numbers of fn_tables.h (not the tables) as ca65 constants.
pub fn ca65_include() -> String {
    let mut s = String::from(
        "; fn_tables.inc: the software SSNAIL core's numbers for ca65, those of fn_tables.h with the\n\
         ; same names: ISA v1 (docs/spec/isa.md §3.2-§3.5), the weight formats (docs/spec/numerics.md §4.1).\n\
         ; GENERATED from the ssnail-format crate (format/src/softcore.rs); do not edit. Regenerate:\n\
         ;   cargo run -q -p ssnail-format --example fn_tables -- --ca65 > mega65/softcore/fn_tables.inc\n\
         .ifndef FN_TABLES_INC\nFN_TABLES_INC = 1\n",
    );
    facts::ca65_defines(&mut s, &groups(), 24);
    s.push_str(".endif\n");
    s
}
