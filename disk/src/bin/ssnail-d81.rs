//! `ssnail-d81`: build the SSNAIL program disk, list and extract D81 files.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use ssnail_disk::{FileType, D81};
use ssnail_format::image::{Header, HEADER_LEN, MAGIC};
use ssnail_format::mega65::{overlay, OVERLAY_FILE};
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "ssnail-d81",
    about = "D81 disk images for the SSNAIL MEGA65 program"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build the program disk: the PRG as SSNAIL and AUTOBOOT.C65, its overlay as ssnail.ovl,
    /// the software core as ssnail.core, then every image that fits; images that do not fit go to SDCARD/SSNAIL/ for
    /// copying to the SD card.
    Build {
        /// Output D81
        #[arg(long)]
        out: PathBuf,
        /// The program (a PRG with load address $2001)
        #[arg(long)]
        program: PathBuf,
        /// The program's chat overlay (build/mega65/ssnail.ovl, made with the PRG), which the
        /// program loads at start from the same disk
        #[arg(long)]
        overlay: Option<PathBuf>,
        /// The software SSNAIL core (build/mega65/ssnail.core), which the program loads when the
        /// MEGA65 has no SSNAIL FPGA core
        #[arg(long)]
        core: Option<PathBuf>,
        /// Folder for images too big for the disk (files go to <DIR>/SSNAIL/)
        #[arg(long)]
        sdcard: PathBuf,
        /// Disk name
        #[arg(long, default_value = "SSNAIL")]
        name: String,
        /// SSNAIL images (.ssnail), in order of preference
        images: Vec<PathBuf>,
    },
    /// List a D81's directory
    List { image: PathBuf },
    /// Copy one file out of a D81
    Extract {
        image: PathBuf,
        name: String,
        out: PathBuf,
    },
}

fn main() {
    if let Err(e) = run(Cli::parse()) {
        eprintln!("ssnail-d81: {e:#}");
        std::process::exit(1);
    }
}

/// Outputs go through ssnail-output (atomic for regular files, never over
/// a device or an input, the umask's permissions, cleaned up on signals).
fn write_out(path: &Path, bytes: &[u8], inputs: &[&Path]) -> Result<()> {
    Ok(ssnail_output::write_creating_dirs(path, bytes, inputs)?)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("{}", path.display()))
}

/// Directory name on the disk: the file name in lower case, shortened to 16 characters by
/// cutting the stem (the extension stays so the program and users recognise it).
fn disk_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if file.len() <= 16 {
        return file;
    }
    match file.rfind('.') {
        Some(dot) if file.len() - dot < 16 => {
            let ext = &file[dot..];
            format!("{}{}", &file[..16 - ext.len()], ext)
        }
        _ => file[..16].to_string(),
    }
}

/// The software core's file on the disk and its first bytes (mega65/include/softcore_abi.inc).
const SOFT_CORE_NAME: &str = "ssnail.core";
const SOFT_CORE_MAGIC: &[u8] = b"SNLC";

/// The largest memory a MEGA65 board gives SSNAIL: R4-R6, 64 MB of SDRAM
/// then 8 MB of HyperRAM (§1.9).
const BOARD_MAX: u64 = 72 << 20;

/// True for a file that starts with the SSNAIL magic.
fn is_image_file(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == MAGIC
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Build {
            out,
            program,
            overlay,
            core,
            sdcard,
            name,
            images,
        } => {
            let prg = read(&program)?;
            if prg.len() < 2 || prg[0..2] != [0x01, 0x20] {
                bail!(
                    "{}: not a MEGA65 PRG (load address must be $2001)",
                    program.display()
                );
            }
            let mut disk = D81::new(&name, *b"65").with_context(|| name.clone())?;
            disk.add_file("ssnail", FileType::Prg, &prg)
                .context("ssnail")?;
            disk.add_file("autoboot.c65", FileType::Prg, &prg)
                .context("autoboot.c65")?;
            if let Some(ovl) = &overlay {
                let bin = read(ovl)?;
                // The program checks the same header (ssnail_format::mega65::overlay), then the
                // check sums its own build wrote.
                if bin.len() < overlay::HEADER_LEN || bin[..4] != overlay::MAGIC.to_le_bytes() {
                    bail!(
                        "{}: not the MEGA65 program's overlay (no SNLO magic; make mega65-prg builds it)",
                        ovl.display()
                    );
                }
                disk.add_file(OVERLAY_FILE, FileType::Seq, &bin)
                    .context(OVERLAY_FILE)?;
            }
            if let Some(core) = &core {
                let bin = read(core)?;
                // The program checks the same bytes (mega65/include/softcore_abi.inc, SC_MAGIC).
                if !bin.starts_with(SOFT_CORE_MAGIC) {
                    bail!(
                        "{}: not a software SSNAIL core (no SNLC magic; make mega65-core builds it)",
                        core.display()
                    );
                }
                disk.add_file(SOFT_CORE_NAME, FileType::Seq, &bin)
                    .context(SOFT_CORE_NAME)?;
            }
            let mut on_sd = Vec::new();
            // Every image first: one that no board can run is refused
            // before anything is written.
            for img in &images {
                let data = read(img)?;
                if let Ok(h) = Header::parse(&data) {
                    let need = h.mem_needed as u64;
                    if need > BOARD_MAX {
                        bail!(
                            "{}: needs {:.2} MB of SSNAIL memory, more than any MEGA65 board has \
                             (72 MB on R4-R6): no board can run it (ssnail convert --mem-mb 72 \
                             or less says what fits)",
                            img.display(),
                            need as f64 / (1u64 << 20) as f64
                        );
                    }
                }
            }
            for img in &images {
                let data = read(img)?;
                if data.len() < HEADER_LEN || &data[0..4] != MAGIC {
                    bail!("{}: not an SSNAIL image (no SSNL magic)", img.display());
                }
                // The header must describe exactly this file: a truncated
                // image, or one whose header claims a huge payload, would
                // fail only on the MEGA65.
                let h = Header::parse(&data).map_err(|e| anyhow!("{}: {e}", img.display()))?;
                if h.file_len() != data.len() as u64 {
                    bail!(
                        "{}: file is {} bytes but its header describes {} (truncated or corrupt image)",
                        img.display(),
                        data.len(),
                        h.file_len()
                    );
                }
                let n = disk_name(img);
                // Which boards have the memory (§1.9): 8 MB every board, more R4-R6 only.
                let boards = if h.mem_needed as u64 <= 8 << 20 {
                    "runs on every board"
                } else {
                    "runs on R4-R6 only (R3 has 8 MB)"
                };
                match disk.add_file(&n, FileType::Seq, &data) {
                    Ok(()) => println!(
                        "{}: on the disk as \"{n}\" ({} blocks; {boards})",
                        img.display(),
                        D81::blocks_for(data.len())
                    ),
                    Err(ssnail_disk::DiskError::DiskFull { needed, free, .. }) => {
                        let sd_name = img
                            .file_name()
                            .map(|f| f.to_string_lossy().to_uppercase())
                            .unwrap_or_default();
                        let dest = sdcard.join("SSNAIL").join(&sd_name);
                        write_out(&dest, &data, &[img])?;
                        println!(
                            "{}: needs {needed} blocks, {free} free on the disk: copied to {} \
                             (put it in the SSNAIL folder of the SD card; {boards})",
                            img.display(),
                            dest.display()
                        );
                        on_sd.push(sd_name);
                    }
                    Err(e) => return Err(e).with_context(|| img.display().to_string()),
                }
            }
            // The folder holds exactly this run's images: images left by
            // earlier runs would otherwise appear in the program's list.
            let folder = sdcard.join("SSNAIL");
            if let Ok(entries) = std::fs::read_dir(&folder) {
                for e in entries.flatten() {
                    let file = e.file_name().to_string_lossy().into_owned();
                    if on_sd.contains(&file) || !is_image_file(&e.path()) {
                        continue;
                    }
                    std::fs::remove_file(e.path())
                        .with_context(|| format!("{}: cannot remove", e.path().display()))?;
                    println!(
                        "{}: removed (an image from an earlier build)",
                        e.path().display()
                    );
                }
            }
            let readme = sdcard.join("README.TXT");
            if !on_sd.is_empty() {
                // No host paths: the note travels to the SD card.
                let disk_file = out
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let note = format!(
                    "Copy the SSNAIL folder to the root of the MEGA65's SD card (FAT32).\n\
                     The program lists the images in / and /SSNAIL; these did not fit on {disk_file}:\n{}\n",
                    on_sd.join("\n")
                );
                write_out(&readme, note.as_bytes(), &[])?;
            } else if readme.exists() {
                std::fs::remove_file(&readme)
                    .with_context(|| format!("{}: cannot remove", readme.display()))?;
            }
            let mut inputs: Vec<&Path> = vec![&program];
            inputs.extend(core.as_deref());
            inputs.extend(images.iter().map(PathBuf::as_path));
            write_out(&out, disk.bytes(), &inputs)?;
            println!(
                "wrote {}: {} blocks free",
                out.display(),
                disk.free_blocks()
            );
        }
        Cmd::List { image } => {
            let d = D81::from_bytes(read(&image)?).with_context(|| image.display().to_string())?;
            println!("0 \"{}\"", d.disk_name());
            for e in d.files().with_context(|| image.display().to_string())? {
                println!("{:<5} \"{}\" {:?}", e.blocks, e.name, e.file_type);
            }
            println!("{} blocks free.", d.free_blocks());
        }
        Cmd::Extract { image, name, out } => {
            let d = D81::from_bytes(read(&image)?).with_context(|| image.display().to_string())?;
            let data = d
                .read_file(&name)
                .with_context(|| image.display().to_string())?;
            write_out(&out, &data, &[&image])?;
        }
    }
    Ok(())
}
