//! Constants that more than one language uses, declared once as data, and the two writers that
//! give them to the C (`#define NAME value`) and to ca65 (`NAME = value`).
//!
//! A [`Group`] is one subject (the ISA's operand bits, the hardware multiplier, Hyppo's calls...):
//! a prefix, where its facts come from, and the facts. The [`group!`] macro declares a group once
//! as a Rust module of constants (which Rust code uses by name) and, from the same list, the
//! group as data. The name of a constant is the same in every language: its group's prefix and its
//! Rust name (`math::MULTINA` is `MATH_MULTINA` in C and in ca65), so no name is mapped by hand.
//! Groups built from a Rust enum ([`Group::new`], e.g. the opcodes) follow the same rule with the
//! variant's name in capitals.

use std::fmt::Write;

/// One constant of a group: its Rust name, its value and its first doc line.
#[derive(Clone, Debug)]
pub struct Fact {
    pub name: String,
    pub value: u64,
    pub doc: String,
}

/// How a group's values are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Radix {
    /// Bytes as 2 hex digits, 16-bit values as 4, wider ones as 8 (C: `UL`).
    Hex,
    /// Counts and sizes, in decimal (C: `UL` above 16 bits).
    Decimal,
}

impl Radix {
    /// The word after a group's source in [`group!`]: none (hex) or `decimal`.
    pub fn from_words(words: &[&str]) -> Radix {
        match words {
            [] => Radix::Hex,
            ["decimal"] => Radix::Decimal,
            _ => panic!("group!: {words:?} is not a radix (only `decimal`)"),
        }
    }
}

/// One subject: the prefix of its names, where the facts come from, and the facts.
#[derive(Clone, Debug)]
pub struct Group {
    pub prefix: &'static str,
    pub source: String,
    pub radix: Radix,
    pub facts: Vec<Fact>,
}

impl Group {
    /// A group whose facts are made at run time (an enum's variants, a table of formats).
    pub fn new(prefix: &'static str, source: &str, radix: Radix) -> Group {
        Group {
            prefix,
            source: source.to_string(),
            radix,
            facts: Vec::new(),
        }
    }

    /// Adds a fact named `name` (the Rust name, without the prefix).
    pub fn fact(mut self, name: &str, value: u64, doc: &str) -> Group {
        self.facts.push(Fact {
            name: name.to_string(),
            value,
            doc: doc.to_string(),
        });
        self
    }

    /// The full name of each fact with its value: what every language calls it.
    pub fn names(&self) -> impl Iterator<Item = (String, u64)> + '_ {
        self.facts
            .iter()
            .map(|f| (format!("{}{}", self.prefix, f.name), f.value))
    }
}

/// Declares a group: a module of constants and its `group()`, from one list. Optional
/// `, decimal` after the source writes its values in decimal.
macro_rules! group {
    (
        $(#[doc = $mdoc:literal])*
        pub mod $module:ident, prefix $prefix:literal, source $source:literal $(, $radix:ident)? {
            $( #[doc = $doc:literal] pub const $name:ident : $ty:ty = $value:expr; )*
        }
    ) => {
        $(#[doc = $mdoc])*
        pub mod $module {
            $( #[doc = $doc] pub const $name: $ty = $value; )*
            /// This group as data, for the generated C and ca65 files.
            pub fn group() -> $crate::facts::Group {
                let radix = $crate::facts::Radix::from_words(&[$(stringify!($radix))?]);
                let mut g = $crate::facts::Group::new($prefix, $source, radix);
                $( g = g.fact(stringify!($name), $name as u64, $doc.trim()); )*
                g
            }
        }
    };
}
pub(crate) use group;

/// A value as C writes it.
pub fn c_value(v: u64, radix: Radix) -> String {
    match (radix, v) {
        (Radix::Hex, 0..=0xFF) => format!("0x{v:02X}"),
        (Radix::Hex, 0x100..=0xFFFF) => format!("0x{v:04X}"),
        (Radix::Hex, _) => format!("0x{v:08X}UL"),
        (Radix::Decimal, 0..=0xFFFF) => v.to_string(),
        (Radix::Decimal, _) => format!("{v}UL"),
    }
}

/// A value as ca65 writes it.
pub fn ca65_value(v: u64, radix: Radix) -> String {
    match (radix, v) {
        (Radix::Hex, 0..=0xFF) => format!("${v:02X}"),
        (Radix::Hex, 0x100..=0xFFFF) => format!("${v:04X}"),
        (Radix::Hex, _) => format!("${v:08X}"),
        (Radix::Decimal, _) => v.to_string(),
    }
}

/// The groups as C `#define`s, each under a comment naming its source.
pub fn c_defines(o: &mut String, groups: &[Group], width: usize) {
    for g in groups {
        writeln!(o, "\n/* {} */", g.source).unwrap();
        for f in &g.facts {
            let name = format!("{}{}", g.prefix, f.name);
            let value = c_value(f.value, g.radix);
            let line = match f.doc.trim() {
                "" => format!("#define {name:<width$} {value}"),
                doc => format!("#define {name:<width$} {value:<12} /* {doc} */"),
            };
            writeln!(o, "{line}").unwrap();
        }
    }
}

/// The same groups as ca65 constants, the same names.
pub fn ca65_defines(o: &mut String, groups: &[Group], width: usize) {
    for g in groups {
        writeln!(o, "\n; {}", g.source).unwrap();
        for f in &g.facts {
            let name = format!("{}{}", g.prefix, f.name);
            let value = ca65_value(f.value, g.radix);
            let line = match f.doc.trim() {
                "" => format!("{name:<width$} = {value}"),
                doc => format!("{name:<width$} = {value:<10} ; {doc}"),
            };
            writeln!(o, "{line}").unwrap();
        }
    }
}
