//! ISA v1 semantics on small hand-assembled scripts (spec §3), faults, traffic
//! accounting (§6.4) and host hooks.

mod common;

use ssnail_core::{FaultKind, Host, Kernels, Machine, NoHost, Numerics};
use ssnail_format::ggml::{f16_to_f32, f32_to_f16, quantize_native, GgmlType};
use ssnail_format::image::BASE;
use ssnail_format::isa::{areg, AttnBlock, Instr, Op, GEMV_ACC, GEMV_F16OUT, KV_F16, KV_F32};

const CODE: u32 = BASE + 0x5000;
const DATA: u32 = BASE + 0x8000;

fn i(op: Op, a: u8, b: u8, x: u32, y: u32, z: u32) -> Instr {
    Instr::new(op, a, b, x, y, z)
}

fn put_f32s(m: &mut Machine, addr: u32, v: &[f32]) {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    assert!(m.write_bytes(addr as u64, &b));
}

fn get_f32s(m: &Machine, addr: u32, n: usize) -> Vec<f32> {
    m.peek_f32s(addr as u64, n).unwrap()
}

#[test]
fn scalar_ops_registers_and_branches() {
    let halt = i(Op::Halt, 0, 0, 0, 0, 0);
    let prog = [
        i(Op::Li, 1, 0, 0, 0, 5),                                 // R1 = 5
        i(Op::AddI, 2, 1, 0, 0, (-7i32) as u32),                  // R2 = 5 - 7 = 0xFFFFFFFE
        i(Op::Li, 15, 0, 0, 0, 77),                               // write to R15: still reads 0
        i(Op::Str, 15, 0, DATA, 0, 0),                            // stores 0
        i(Op::Str, 2, 0, DATA + 4, 0, 0),                         //
        i(Op::Lea, 3, 1, DATA, 0, 8),                             // A3 = DATA + 5*8
        i(Op::Str, 1, 0, areg(3, 4), 0, 0),                       // [DATA+44] = 5
        i(Op::Ldr, 4, 0, areg(3, 4), 0, 0),                       // R4 = 5
        i(Op::Blt, 1, 2, CODE + 16 * 10, 0, 0),                   // 5 < 0xFFFFFFFE unsigned: taken
        halt,                                                     // skipped
        i(Op::Bne, 4, 1, CODE + 16 * 9, 0, 0),                    // 5 != 5: not taken
        i(Op::Beq, 15, 15, 0x7000_0000 | (CODE + 16 * 13), 0, 0), // bits 28–30 ignored
        halt,
        i(Op::SetN, 0, 0, 11, 22, 33),
        i(Op::Lea, 5, 15, areg(3, 0x10), 0, 3), // A5 = A3 + $10 (R15·3 = 0)
        halt,
    ];
    let mut m = common::machine_with(1 << 20, CODE, &prog);
    m.run(CODE, &mut NoHost).unwrap();
    assert_eq!(m.regs.r[2], 0xFFFF_FFFE);
    assert_eq!(m.peek_u32(DATA as u64), Some(0));
    assert_eq!(m.peek_u32(DATA as u64 + 4), Some(0xFFFF_FFFE));
    assert_eq!(m.peek_u32(DATA as u64 + 44), Some(5));
    assert_eq!(m.regs.r[4], 5);
    assert_eq!(m.regs.n, [11, 22, 33]);
    assert_eq!(m.regs.a[3], DATA + 40);
    assert_eq!(m.regs.a[5], DATA + 40 + 0x10);
    assert_eq!(m.instructions, 14, "two HALTs skipped by the branches");
    // Traffic: 16 per fetch, 4 per LDR/STR.
    assert_eq!(m.traffic.read, 14 * 16 + 4);
    assert_eq!(m.traffic.written, 3 * 4);
}

#[test]
fn faults_report_pc_and_instruction() {
    // Illegal opcode.
    let mut m = common::machine_with(
        1 << 20,
        CODE,
        &[
            i(Op::Nop, 0, 0, 0, 0, 0),
            Instr {
                opcode: 0x13,
                a: 1,
                b: 2,
                x: 3,
                y: 4,
                z: 5,
            },
        ],
    );
    let f = m.run(CODE, &mut NoHost).unwrap_err();
    assert_eq!(f.kind, FaultKind::IllegalOpcode(0x13));
    assert_eq!(f.pc, CODE + 16);
    assert_eq!(f.instr.unwrap().x, 3);
    let msg = f.to_string();
    assert!(
        msg.contains("$8005010") && msg.contains("illegal opcode $13"),
        "{msg}"
    );
    // Misaligned branch target.
    let mut m = common::machine_with(1 << 20, CODE, &[i(Op::Beq, 15, 15, CODE + 8, 0, 0)]);
    let f = m.run(CODE, &mut NoHost).unwrap_err();
    assert_eq!((f.kind, f.pc), (FaultKind::MisalignedPc, CODE + 8));
    // Address outside memory (register-relative sums are not re-masked).
    let mut m = common::machine_with(
        1 << 20,
        CODE,
        &[
            i(Op::Lea, 1, 15, BASE + 0xFFFFC, 0, 0),
            i(Op::Ldr, 2, 0, areg(1, 8), 0, 0),
        ],
    );
    let f = m.run(CODE, &mut NoHost).unwrap_err();
    assert_eq!(
        f.kind,
        FaultKind::Address {
            addr: (BASE + 0x100004) as u64,
            len: 4
        }
    );
    assert!(f.to_string().contains("LDR"), "{f}");
    // Below $8000000.
    let mut m = common::machine_with(1 << 20, CODE, &[i(Op::Str, 1, 0, 0x100, 0, 0)]);
    assert!(matches!(
        m.run(CODE, &mut NoHost).unwrap_err().kind,
        FaultKind::Address { .. }
    ));
    // Cumulative instruction limit (configurable): an endless loop.
    let mut m = common::machine_with(
        1 << 20,
        CODE,
        &[i(Op::Nop, 0, 0, 0, 0, 0), i(Op::Beq, 15, 15, CODE, 0, 0)],
    );
    m.instr_limit = 1000;
    let f = m.run(CODE, &mut NoHost).unwrap_err();
    assert_eq!(f.kind, FaultKind::InstructionLimit(1000));
    assert_eq!(m.instructions, 1000);
    // Bad operands: unknown weight format, partial blocks.
    let mut m = common::machine_with(
        1 << 20,
        CODE,
        &[
            i(Op::SetN, 0, 0, 40, 1, 0),
            i(Op::Gemv, 8, 0, DATA, DATA, DATA),
        ],
    );
    assert!(matches!(
        m.run(CODE, &mut NoHost).unwrap_err().kind,
        FaultKind::BadOperand(_)
    ));
    let mut m = common::machine_with(
        1 << 20,
        CODE,
        &[
            i(Op::SetN, 0, 0, 32, 1, 0),
            i(Op::Gemv, 12, 0, DATA, DATA, DATA),
        ],
    );
    assert!(m
        .run(CODE, &mut NoHost)
        .unwrap_err()
        .to_string()
        .contains("weight format 12"));
}

#[test]
fn copy_reads_the_whole_source_first() {
    let mut m = common::machine_with(
        1 << 20,
        CODE,
        &[
            i(Op::Copy, 0, 0, DATA, DATA + 2, 0xABCD_0006),
            i(Op::Halt, 0, 0, 0, 0, 0),
        ],
    );
    m.write_bytes(DATA as u64, &[1, 2, 3, 4, 5, 6, 7, 8]);
    m.run(CODE, &mut NoHost).unwrap();
    // Overlapping forward copy of 6 bytes (Z & $FFFF): as if via a buffer.
    assert_eq!(m.bytes(DATA as u64, 8).unwrap(), &[1, 2, 1, 2, 3, 4, 5, 6]);
    assert_eq!(m.traffic.read, 2 * 16 + 6);
    assert_eq!(m.traffic.written, 6);
}

#[test]
fn gemv_flags_deqrow_argmax_cvt16_meanrows() {
    let (rows, cols) = (3usize, 64usize);
    let w: Vec<f32> = (0..rows * cols)
        .map(|k| ((k * 37 % 11) as f32 - 5.0) * 0.125)
        .collect();
    let x: Vec<f32> = (0..cols).map(|k| (k % 7) as f32 * 0.5 - 1.0).collect();
    for fmt in [
        GgmlType::F32,
        GgmlType::F16,
        GgmlType::Bf16,
        GgmlType::Q8_0,
        GgmlType::Q4_0,
    ] {
        for mode in [Numerics::Float, Numerics::Hardware] {
            let mut wb = Vec::new();
            quantize_native(fmt, &w, &mut wb);
            let mut wd = vec![0f32; rows * cols];
            ssnail_format::ggml::dequantize_native(fmt, &wb, &mut wd);
            let exact: Vec<f32> = (0..rows)
                .map(|r| {
                    (0..cols)
                        .map(|c| wd[r * cols + c] as f64 * x[c] as f64)
                        .sum::<f64>() as f32
                })
                .collect();
            let (wa, xa, ya, yb) = (DATA, DATA + 0x4000, DATA + 0x5000, DATA + 0x6000);
            let prog = [
                i(Op::SetN, 0, 0, cols as u32, rows as u32, 0),
                i(Op::Gemv, fmt as u8, 0, wa, xa, ya),
                i(Op::Gemv, fmt as u8, GEMV_ACC, wa, xa, yb),
                i(Op::Gemv, fmt as u8, GEMV_F16OUT, wa, xa, yb + 0x100),
                i(
                    Op::DeqRow,
                    fmt as u8,
                    0,
                    wa + wb.len() as u32 / 3,
                    0,
                    DATA + 0x7000,
                ),
                i(Op::Halt, 0, 0, 0, 0, 0),
            ];
            let mut m = common::machine_with(1 << 20, CODE, &prog);
            m.numerics = mode;
            m.write_bytes(wa as u64, &wb);
            put_f32s(&mut m, xa, &x);
            put_f32s(&mut m, yb, &[100.0, -100.0, 0.5]);
            m.run(CODE, &mut NoHost).unwrap();
            let y = get_f32s(&m, ya, rows);
            let quant = matches!(fmt, GgmlType::Q8_0 | GgmlType::Q4_0);
            let tol = if quant && mode == Numerics::Hardware {
                0.05
            } else {
                1e-6
            };
            for r in 0..rows {
                // Against the dequantised weights in f64; hw mode quantises x for Q formats.
                assert!(
                    (y[r] - exact[r]).abs() <= tol,
                    "{fmt:?} {mode:?} {} {}",
                    y[r],
                    exact[r]
                );
            }
            let acc = get_f32s(&m, yb, rows);
            assert_eq!(acc, vec![100.0 + y[0], -100.0 + y[1], 0.5 + y[2]]);
            let h: Vec<f32> = m
                .bytes(yb as u64 + 0x100, 6)
                .unwrap()
                .chunks(2)
                .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect();
            assert_eq!(
                h,
                y.iter()
                    .map(|v| f16_to_f32(f32_to_f16(*v)))
                    .collect::<Vec<_>>()
            );
            assert_eq!(
                get_f32s(&m, DATA + 0x7000, cols),
                wd[cols..2 * cols].to_vec(),
                "DEQROW row 1"
            );
            // Traffic of the GEMVs: weights + x (+ old y) + y.
            let rb = wb.len() as u64 / rows as u64;
            let gemv_read = 3 * (rows as u64 * rb + 4 * cols as u64) + 4 * rows as u64;
            assert_eq!(m.traffic.read, 6 * 16 + gemv_read + rb);
            assert_eq!(m.traffic.written, 4 * 3 + 4 * 3 + 2 * 3 + 4 * cols as u64);
        }
    }
    // ARGMAX ties → lowest; CVT16 rounds to nearest even, overflow → inf; MEANROWS.
    let prog = [
        i(Op::SetN, 0, 0, 5, 0, 0),
        i(Op::ArgMax, 7, 0, DATA, 0, 0),
        i(Op::Cvt16, 0, 0, DATA, 0, DATA + 0x100),
        i(Op::Li, 9, 0, 0, 0, 2),
        i(Op::MeanRows, 9, 0, DATA, 0, DATA + 0x200),
        i(Op::Halt, 0, 0, 0, 0, 0),
    ];
    let mut m = common::machine_with(1 << 20, CODE, &prog);
    let v = [1.0f32, 7.0, -3.0, 7.0, 1.0 + 1.0 / 2048.0];
    put_f32s(&mut m, DATA, &v);
    put_f32s(&mut m, DATA + 20, &[3.0, 1.0, 1.0, 70000.0, 2.0]);
    m.run(CODE, &mut NoHost).unwrap();
    assert_eq!(m.regs.r[7], 1);
    let h = m.bytes(DATA as u64 + 0x100, 10).unwrap();
    assert_eq!(
        u16::from_le_bytes([h[8], h[9]]),
        0x3C00,
        "1 + 2^-11 ties to even → 1.0"
    );
    assert_eq!(
        get_f32s(&m, DATA + 0x200, 5),
        vec![2.0, 4.0, -1.0, 35003.5, 1.5 + 1.0 / 4096.0]
    );
}

#[test]
fn gemv_bits_do_not_depend_on_the_thread_count_or_the_kernels() {
    // Big enough that every format's GEMV is split into several row chunks.
    let (rows, cols) = (300usize, 256usize);
    let w: Vec<f32> = (0..rows * cols)
        .map(|k| ((k * 7919 % 1009) as f32 / 1009.0 - 0.5) * 0.37)
        .collect();
    let x: Vec<f32> = (0..cols)
        .map(|k| ((k * 31 % 17) as f32 - 8.0) * 0.21)
        .collect();
    let (wa, xa, ya) = (DATA, DATA + 0x60000, DATA + 0x61000);
    for fmt in [
        GgmlType::F32,
        GgmlType::F16,
        GgmlType::Bf16,
        GgmlType::Q8_0,
        GgmlType::Q4_0,
    ] {
        let mut wb = Vec::new();
        quantize_native(fmt, &w, &mut wb);
        for (mode, kernels) in [Numerics::Float, Numerics::Hardware]
            .into_iter()
            .flat_map(|m| Kernels::ALL.map(|k| (m, k)))
            .filter(|(_, k)| k.supported())
        {
            let run = |threads: usize, kernels: Kernels| {
                let prog = [
                    i(Op::SetN, 0, 0, cols as u32, rows as u32, 0),
                    i(Op::Gemv, fmt as u8, 0, wa, xa, ya),
                    i(Op::Halt, 0, 0, 0, 0, 0),
                ];
                let mut m = common::machine_with(1 << 20, CODE, &prog);
                m.numerics = mode;
                m.set_threads(threads);
                assert!(m.set_kernels(kernels));
                m.write_bytes(wa as u64, &wb);
                put_f32s(&mut m, xa, &x);
                m.run(CODE, &mut NoHost).unwrap();
                let y = get_f32s(&m, ya, rows);
                y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            };
            let one = run(1, kernels);
            let k = kernels.name();
            assert!(
                one.iter().all(|&b| b != 0),
                "{fmt:?} {mode:?} {k}: every row written"
            );
            assert_eq!(one, run(2, kernels), "{fmt:?} {mode:?} {k} 2 threads");
            assert_eq!(one, run(3, kernels), "{fmt:?} {mode:?} {k} 3 threads");
            if mode == Numerics::Hardware {
                assert_eq!(one, run(1, Kernels::Portable), "{fmt:?} {k} vs portable");
            }
        }
    }
}

#[test]
fn rope_and_in_place_vector_ops() {
    let prog = [
        i(Op::SetN, 0, 0, 8, 4, 0),
        i(Op::Rope, 0, 0, DATA, DATA + 0x100, 0),
        i(Op::VAdd, 0, 0, DATA + 0x200, DATA + 0x200, DATA + 0x200), // Z = X = Y
        i(Op::VMul, 0, 0, DATA + 0x200, DATA + 0x200, DATA + 0x300),
        i(Op::Halt, 0, 0, 0, 0, 0),
    ];
    let mut m = common::machine_with(1 << 20, CODE, &prog);
    put_f32s(&mut m, DATA, &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 0.0]);
    put_f32s(&mut m, DATA + 0x100, &[0.0, 1.0, 1.0, 0.0]);
    put_f32s(
        &mut m,
        DATA + 0x200,
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
    );
    m.run(CODE, &mut NoHost).unwrap();
    assert_eq!(
        get_f32s(&m, DATA, 8),
        vec![0.0, 1.0, 0.0, 1.0, -1.0, 1.0, 2.0, 0.0]
    );
    assert_eq!(get_f32s(&m, DATA + 0x200, 3), vec![2.0, 4.0, 6.0]);
    assert_eq!(get_f32s(&m, DATA + 0x300, 3), vec![4.0, 16.0, 36.0]);
}

#[test]
fn attn_gqa_with_f16_and_f32_caches() {
    // 4 heads, 2 KV heads, head_dim 4, positions 0..=2.
    let (nh, nkv, hd, t) = (4usize, 2usize, 4usize, 3usize);
    let kvd = nkv * hd;
    let q: Vec<f32> = (0..nh * hd)
        .map(|k| ((k * 5 % 7) as f32 - 3.0) * 0.25)
        .collect();
    let k: Vec<f32> = (0..t * kvd)
        .map(|k| ((k * 3 % 5) as f32 - 2.0) * 0.5)
        .collect();
    let v: Vec<f32> = (0..t * kvd).map(|k| (k % 9) as f32 * 0.125).collect();
    // f64 reference.
    let mut want = vec![0f64; nh * hd];
    for h in 0..nh {
        let g = h / (nh / nkv);
        let s: Vec<f64> = (0..t)
            .map(|r| {
                (0..hd)
                    .map(|j| q[h * hd + j] as f64 * k[r * kvd + g * hd + j] as f64)
                    .sum::<f64>()
                    / (hd as f64).sqrt()
            })
            .collect();
        let mx = s.iter().cloned().fold(f64::MIN, f64::max);
        let e: Vec<f64> = s.iter().map(|x| (x - mx).exp()).collect();
        let z: f64 = e.iter().sum();
        for j in 0..hd {
            want[h * hd + j] = (0..t)
                .map(|r| e[r] / z * v[r * kvd + g * hd + j] as f64)
                .sum();
        }
    }
    for (fmt, esz) in [(KV_F32, 4u32), (KV_F16, 2)] {
        for mode in [Numerics::Float, Numerics::Hardware] {
            let (blk, kc, vc, qa, out) =
                (DATA, DATA + 0x100, DATA + 0x400, DATA + 0x800, DATA + 0x900);
            let prog = [
                i(Op::Li, 0, 0, 0, 0, 2),
                i(Op::Attn, 0, 0, blk, qa, out),
                i(Op::Halt, 0, 0, 0, 0, 0),
            ];
            let mut m = common::machine_with(1 << 20, CODE, &prog);
            m.numerics = mode;
            let b = AttnBlock {
                k_cache: kc,
                v_cache: vc,
                n_heads: nh as u32,
                n_kv_heads: nkv as u32,
                head_dim: hd as u32,
                kv_format: fmt,
            };
            m.write_bytes(blk as u64, &b.encode());
            let enc = |x: &[f32]| -> Vec<u8> {
                if esz == 4 {
                    x.iter().flat_map(|v| v.to_le_bytes()).collect()
                } else {
                    x.iter()
                        .flat_map(|v| f32_to_f16(*v).to_le_bytes())
                        .collect()
                }
            };
            m.write_bytes(kc as u64, &enc(&k));
            m.write_bytes(vc as u64, &enc(&v));
            put_f32s(&mut m, qa, &q);
            m.run(CODE, &mut NoHost).unwrap();
            let got = get_f32s(&m, out, nh * hd);
            let tol = if mode == Numerics::Float { 1e-6 } else { 2e-3 };
            for j in 0..nh * hd {
                assert!(
                    (got[j] as f64 - want[j]).abs() < tol,
                    "{fmt} {mode:?} {j}: {} vs {}",
                    got[j],
                    want[j]
                );
            }
            let io = (32 + 4 * nh * hd) as u64 + 2 * (t * kvd) as u64 * esz as u64;
            assert_eq!(m.traffic.read, 3 * 16 + io);
            assert_eq!(m.traffic.written, 4 * (nh * hd) as u64);
        }
    }
}

struct Recorder {
    syncs: Vec<u32>,
    argmaxes: usize,
    force: Option<u32>,
}
impl Host for Recorder {
    fn on_sync(&mut self, m: &mut Machine) {
        self.syncs.push(m.regs.r[1]);
        m.poke_u32(DATA as u64 + 0x40, 0xC0FFEE);
    }
    fn on_argmax(&mut self, logits: &[f32], _m: &Machine) -> Option<u32> {
        assert_eq!(logits.len(), 3);
        self.argmaxes += 1;
        self.force
    }
}

#[test]
fn host_hooks_sync_and_sampler() {
    let prog = [
        i(Op::Li, 1, 0, 0, 0, 1),
        i(Op::Sync, 0, 0, 0, 0, 0),
        i(Op::SetN, 0, 0, 3, 0, 0),
        i(Op::ArgMax, 2, 0, DATA, 0, 0),
        i(Op::Li, 1, 0, 0, 0, 2),
        i(Op::Sync, 0, 0, 0, 0, 0),
        i(Op::Halt, 0, 0, 0, 0, 0),
    ];
    for force in [None, Some(2)] {
        let mut m = common::machine_with(1 << 20, CODE, &prog);
        put_f32s(&mut m, DATA, &[0.0, 5.0, 1.0]);
        let mut h = Recorder {
            syncs: vec![],
            argmaxes: 0,
            force,
        };
        m.run(CODE, &mut h).unwrap();
        assert_eq!(h.syncs, vec![1, 2]);
        assert_eq!(h.argmaxes, 1);
        assert_eq!(m.regs.r[2], force.unwrap_or(1));
        assert_eq!(
            m.peek_u32(DATA as u64 + 0x40),
            Some(0xC0FFEE),
            "hosts may poke at SYNC"
        );
    }
}
