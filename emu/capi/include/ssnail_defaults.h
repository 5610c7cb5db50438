/* ssnail_defaults.h: the SSNAIL C library's defaults and addresses for its hosts (ssnail.h, the
 * xemu patch).
 * GENERATED from the ssnail-format crate (format/src/c_header.rs); do not edit. Regenerate:
 *   cargo run -q -p ssnail-format --example c_header -- --capi > emu/capi/include/ssnail_defaults.h */
#ifndef SSNAIL_DEFAULTS_H
#define SSNAIL_DEFAULTS_H
/* SSNAIL memory bandwidth in MB/s the job clock assumes unless told otherwise */
#define SSNAIL_DEFAULT_BANDWIDTH_MBPS 130.0
/* the register block's 28-bit address (spec §9.2; registers::BLOCK) */
#define SSNAIL_REGISTER_BLOCK 0x0FFD7500U
/* SSNAIL memory's first address, the attic RAM window's (spec §2; image::BASE) */
#define SSNAIL_MEMORY_BASE 0x08000000U
#endif
