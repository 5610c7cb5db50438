//! Building the image: every blob encoded into its slice of the payload,
//! in parallel (rayon), tensors dequantised and requantised row by row.

use crate::layout::Content;
use crate::{Converted, Plan, Report};
use rayon::prelude::*;
use ssnail_format::dequant::dequantize;
use ssnail_format::ggml::{quantize_native, GgmlType};
use ssnail_format::image::{HEADER_LEN, PAYLOAD_BASE};
use ssnail_gguf::{Gguf, TensorInfo};

/// RoPE table (§3.6) into `out`: ctx rows of head_dim/2 (cos, sin) pairs,
/// θ = p·base^(−2j/head_dim) in double precision, stored as f32.
fn rope_table(head_dim: u32, base: f64, out: &mut [u8]) {
    let half = (head_dim / 2) as usize;
    for (p, row) in out.chunks_exact_mut(8 * half).enumerate() {
        for (j, pair) in row.chunks_exact_mut(8).enumerate() {
            let theta = p as f64 * base.powf(-2.0 * j as f64 / head_dim as f64);
            pair[..4].copy_from_slice(&(theta.cos() as f32).to_le_bytes());
            pair[4..].copy_from_slice(&(theta.sin() as f32).to_le_bytes());
        }
    }
}

/// Rows encoded per parallel work item.
const ROWS_PER_TASK: usize = 64;

/// The tensor `t` as `dst` in `out`, `out_cols` values a row: its rows
/// with zeros after their `cols` values, then all-zero rows to fill `out`.
fn encode_matrix(
    g: &Gguf,
    t: &TensorInfo,
    dst: GgmlType,
    out_cols: usize,
    out: &mut [u8],
    progress: &(dyn Fn(u64) + Sync),
) {
    let src = g.data(t);
    let (src_rows, cols) = t.rows_cols();
    if t.ty == dst && out_cols == cols && out.len() == src.len() {
        out.copy_from_slice(src);
        progress(out.len() as u64);
        return;
    }
    let (src_rb, dst_rb) = (t.ty.row_bytes(cols), dst.row_bytes(out_cols));
    out.par_chunks_mut(dst_rb * ROWS_PER_TASK)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut f = vec![0f32; out_cols];
            let mut q = Vec::with_capacity(dst_rb);
            for (r, o) in chunk.chunks_exact_mut(dst_rb).enumerate() {
                let row = i * ROWS_PER_TASK + r;
                if row < src_rows {
                    let ok =
                        dequantize(t.ty, &src[row * src_rb..(row + 1) * src_rb], &mut f[..cols]);
                    debug_assert!(ok, "types were checked when planned");
                } else {
                    f.fill(0.0);
                }
                q.clear();
                quantize_native(dst, &f, &mut q);
                o.copy_from_slice(&q);
            }
            progress(chunk.len() as u64);
        });
}

fn encode_vectors(g: &Gguf, ts: &[&TensorInfo], out: &mut [u8]) {
    let mut off = 0;
    for t in ts {
        let n = t.n_elements() as usize;
        let mut f = vec![0f32; n];
        let ok = dequantize(t.ty, g.data(t), &mut f);
        debug_assert!(ok, "types were checked when planned");
        for (i, v) in f.iter().enumerate() {
            out[off + 4 * i..off + 4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        off += 4 * n;
    }
}

impl<'a> Plan<'a> {
    /// Total bytes of stored tensors (for a progress bar).
    pub fn weight_bytes(&self) -> u64 {
        self.stored
            .iter()
            .filter(|s| s.matrix)
            .map(|s| s.bytes as u64)
            .sum()
    }

    /// Encode every tensor (in parallel) and assemble the image.
    /// `progress` receives byte counts of matrices as they are done.
    pub fn build(self, progress: &(dyn Fn(u64) + Sync)) -> Converted {
        let payload_len = self.header.payload_len as usize;
        let mut image = vec![0u8; HEADER_LEN + payload_len];
        image[..HEADER_LEN].copy_from_slice(&self.header.to_bytes());
        // Split the payload into one disjoint slice per blob (blobs are in
        // address order), then fill them in parallel.
        let mut rest: &mut [u8] = &mut image[HEADER_LEN..];
        let mut at = PAYLOAD_BASE as usize;
        let mut jobs = Vec::with_capacity(self.layout.blobs.len());
        for blob in &self.layout.blobs {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(blob.addr as usize - at);
            let (mine, tail) = tail.split_at_mut(blob.len);
            jobs.push((blob, mine));
            rest = tail;
            at = blob.addr as usize + blob.len;
        }
        let g = self.g;
        jobs.into_par_iter()
            .for_each(|(blob, out)| match &blob.content {
                Content::Bytes(b) => out.copy_from_slice(b),
                Content::Matrix { t, dst, cols, .. } => {
                    encode_matrix(g, t, *dst, *cols, out, progress)
                }
                Content::Vectors(ts) => encode_vectors(g, ts, out),
                Content::Rope { head_dim, base, .. } => rope_table(*head_dim, *base, out),
            });
        let report = Report::new(&self);
        Converted {
            image,
            header: self.header,
            report,
        }
    }
}
