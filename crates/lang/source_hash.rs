// The source hash of the ABI fingerprint (docs/packages.md), shared by
// the build scripts of rclick-lang and rclick-core (each `include!`s it).

/// FNV-1a (64 bits) over every file under `roots`, in sorted path order,
/// each framed by its relative path and length.
fn source_hash(base: &Path, roots: &[&str]) -> u64 {
    let mut files = Vec::new();
    for r in roots {
        collect(&base.join(r), &mut files);
    }
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for f in files {
        let rel = f
            .strip_prefix(base)
            .unwrap_or(&f)
            .to_string_lossy()
            .into_owned();
        let data = std::fs::read(&f).unwrap_or_default();
        eat(rel.as_bytes());
        eat(&(data.len() as u64).to_le_bytes());
        eat(&data);
    }
    h
}

fn collect(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        if let Ok(rd) = std::fs::read_dir(p) {
            for e in rd.flatten() {
                collect(&e.path(), out);
            }
        }
    } else if p.is_file() {
        out.push(p.to_path_buf());
    }
}
