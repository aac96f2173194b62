//! Deep-page benchmark for `tackle_tools::page::read_page` against `tail -n +N | head -n 2000`.
//!
//! Generates (once, cached by size under `target/bench-data/`) a source-like text file of about
//! 1 GiB, warms the page cache, then times side by side:
//! (a) `sh -c 'tail -n +N file | head -n 2000'`, (b) `read_page` with a fresh index, and
//! (c) `read_page` again on the built index. N is about 17,000,000 at full size (97% of the lines
//! when the file is made smaller with `TACKLE_BENCH_READ_BYTES`).
//!
//! Run: `cargo bench -p tackle-bench --bench read_deep_page`
//! Small: `TACKLE_BENCH_READ_BYTES=50000000 cargo bench -p tackle-bench --bench read_deep_page`

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tackle_tools::page::{LineIndex, PageRequest, read_page};

const DEFAULT_BYTES: u64 = 1 << 30;
const PAGE_LINES: usize = 2000;
const DEEP_LINE: u64 = 17_000_000;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> BenchResult<()> {
    // `cargo bench` passes `--bench`; a filter argument that is not ours means "not this bench".
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"read_deep_page".contains(arg.as_str()))
    {
        return Ok(());
    }
    let bytes = match std::env::var("TACKLE_BENCH_READ_BYTES") {
        Ok(value) => value.parse::<u64>().map_err(|err| {
            format!("TACKLE_BENCH_READ_BYTES={value:?} is not a byte count: {err}")
        })?,
        Err(_) => DEFAULT_BYTES,
    };
    let path = data_file(bytes)?;
    let (len, total_lines) = warm_and_count(&path)?;
    let offset = DEEP_LINE.min(total_lines * 97 / 100).max(1);
    println!(
        "file {} ({:.2} GiB, {} lines), page at line {offset}, {PAGE_LINES} lines",
        path.display(),
        len as f64 / (1u64 << 30) as f64,
        total_lines
    );

    // (a) GNU tail | head, the whole pipeline.
    let pipeline = format!(
        "tail -n +{offset} '{}' | head -n {PAGE_LINES}",
        path.display()
    );
    let mut tail_out = Vec::new();
    let tail = median(5, || {
        let start = Instant::now();
        let out = Command::new("sh").arg("-c").arg(&pipeline).output()?;
        let took = start.elapsed();
        if !out.status.success() {
            return Err(format!("{pipeline} failed: {}", out.status).into());
        }
        tail_out = out.stdout;
        Ok(took)
    })?;

    // (b) read_page with a fresh index each time.
    let file = File::open(&path)?;
    let req = PageRequest {
        offset,
        limit: PAGE_LINES,
        max_line_bytes: 64 * 1024,
    };
    let mut first_bytes = 0;
    let mut index = LineIndex::new();
    let first = median(5, || {
        index = LineIndex::new();
        let start = Instant::now();
        let page = read_page(&file, &mut index, &req)?;
        let took = start.elapsed();
        if page.text.as_bytes() != tail_out.as_slice() {
            return Err("read_page text differs from tail | head output".into());
        }
        first_bytes = page.bytes_read;
        Ok(took)
    })?;

    // (c) the same page again on the built index.
    let mut repeat_bytes = 0;
    let repeat = median(101, || {
        let start = Instant::now();
        let page = read_page(&file, &mut index, &req)?;
        let took = start.elapsed();
        if page.text.as_bytes() != tail_out.as_slice() {
            return Err("repeated read_page text differs from tail | head output".into());
        }
        repeat_bytes = page.bytes_read;
        Ok(took)
    })?;

    // (d) and (e): the same page through every layer of the runtime (`read_file` call: parse,
    // prepare, gate hook, schedule, execute, shape, two durable event appends).
    let (through_first, through_repeat) = through_runtime(&path, offset, &tail_out)?;

    println!("(a) tail | head          median {:>10.3} ms", ms(tail));
    println!(
        "(b) read_page, fresh     median {:>10.3} ms  ({} bytes scanned)",
        ms(first),
        first_bytes
    );
    println!(
        "(c) read_page, repeated  median {:>10.3} ms  ({} bytes scanned, {} checkpoints)",
        ms(repeat),
        repeat_bytes,
        index.checkpoints()
    );
    println!(
        "(b)/(a) = {:.3} (target <= 0.5)",
        first.as_secs_f64() / tail.as_secs_f64()
    );
    println!(
        "(c)/(a) = {:.4} (target <= 0.05)",
        repeat.as_secs_f64() / tail.as_secs_f64()
    );
    println!(
        "(d) read_file call, fresh index  median {:>10.3} ms   (d)/(a) = {:.3} (target <= 0.5)",
        ms(through_first),
        through_first.as_secs_f64() / tail.as_secs_f64()
    );
    println!(
        "(e) read_file call, repeated     median {:>10.3} ms   (e)/(a) = {:.4} (target <= 0.05)",
        ms(through_repeat),
        through_repeat.as_secs_f64() / tail.as_secs_f64()
    );
    println!("text identical to tail | head output: yes");
    Ok(())
}

/// Median first-read and repeated-read times of a `read_file` call through `Runtime::run_batch`.
fn through_runtime(path: &Path, offset: u64, expected: &[u8]) -> BenchResult<(Duration, Duration)> {
    use std::sync::Arc;
    use tackle_protocol::{CallId, ToolCall};
    use tackle_runtime::{AllowAll, CancellationToken, Catalog, Runtime, RuntimeConfig, Session};
    use tackle_tools::ReadFile;
    use tackle_tools::page::LineIndexCache;

    let root = path.parent().ok_or("data file has no parent directory")?;
    let name = path
        .file_name()
        .ok_or("data file has no name")?
        .to_string_lossy()
        .into_owned();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let session = Session::open(root)?;
    let call = ToolCall {
        id: CallId("bench".into()),
        name: "read_file".into(),
        arguments: serde_json::json!({ "path": name, "offset": offset, "limit": PAGE_LINES }),
    };
    let run = |runtime: &Runtime| -> BenchResult<Duration> {
        let start = Instant::now();
        let results =
            rt.block_on(runtime.run_batch(&session, vec![call.clone()], CancellationToken::new()))?;
        let took = start.elapsed();
        let text = results[0].text();
        if results[0].is_error || !text.as_bytes().starts_with(expected) {
            return Err(format!(
                "read_file call returned something else: {}",
                &text[..text.len().min(300)]
            )
            .into());
        }
        Ok(took)
    };
    let fresh_runtime = || -> BenchResult<Runtime> {
        let tool: Arc<dyn tackle_tool::DynTool> =
            Arc::new(ReadFile::with_cache(Arc::new(LineIndexCache::new(4))));
        Ok(Runtime::new(
            Catalog::new(vec![tool])?,
            Arc::new(AllowAll),
            RuntimeConfig::default(),
        ))
    };
    let first = median(5, || run(&fresh_runtime()?))?;
    let warm = fresh_runtime()?;
    run(&warm)?;
    let repeat = median(51, || run(&warm))?;
    Ok((first, repeat))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(runs: usize, mut once: impl FnMut() -> BenchResult<Duration>) -> BenchResult<Duration> {
    let mut times = (0..runs).map(|_| once()).collect::<BenchResult<Vec<_>>>()?;
    times.sort();
    Ok(times[times.len() / 2])
}

/// The cached data file of `bytes` bytes, generating it first when absent.
fn data_file(bytes: u64) -> BenchResult<PathBuf> {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
    };
    let dir = target.join("bench-data");
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    let path = dir.join(format!("read_deep_page_{bytes}.txt"));
    if path.exists() {
        return Ok(path);
    }
    let partial = dir.join(format!("read_deep_page_{bytes}.txt.partial"));
    let start = Instant::now();
    generate(&partial, bytes)?;
    // Renaming only a complete file means an interrupted run never leaves a short one behind.
    std::fs::rename(&partial, &path)?;
    println!(
        "generated {} in {:.1} s",
        path.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(path)
}

/// Writes source-like lines of 20 to 100 bytes (indentation plus tokens) until `bytes` is reached.
fn generate(path: &Path, bytes: u64) -> BenchResult<()> {
    const TOKENS: &[&str] = &[
        "let",
        "mut",
        "fn",
        "self.",
        "return",
        "if",
        "else",
        "match",
        "=>",
        "Some(x)",
        "None",
        "Ok(())",
        "Err(e)",
        "&mut",
        "buffer",
        "index",
        "offset",
        "len",
        "0",
        "1",
        "4096",
        "+=",
        "==",
        "=",
        "{",
        "}",
        "(",
        ");",
        "->",
        "u64",
        "usize",
        "String::new()",
        "// TODO:",
        "checkpoint",
        "line_count",
        "read_at(&mut buf, pos)?",
        "vec![0; 1024]",
        "for",
        "in",
        "while",
        "loop",
        "break;",
        "continue;",
        "struct",
        "impl",
        "pub",
        "use",
        "std::fs::File",
        "\"text\"",
        "'\\n'",
        "as",
        "&&",
        "||",
        "!",
    ];
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut rng: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut written = 0u64;
    let mut line = String::with_capacity(128);
    while written < bytes {
        line.clear();
        let target = 20 + (next() % 81) as usize;
        let indent = 4 * (next() % 4) as usize;
        line.extend(std::iter::repeat_n(' ', indent));
        while line.len() < target {
            let token = TOKENS[(next() % TOKENS.len() as u64) as usize];
            line.push_str(token);
            line.push(' ');
        }
        line.truncate(target.max(indent + 1));
        let trimmed = line.trim_end().len();
        line.truncate(trimmed);
        line.push('\n');
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    out.flush()?;
    Ok(())
}

/// Reads the whole file once so every contender starts from a warm page cache, and counts lines.
fn warm_and_count(path: &Path) -> BenchResult<(u64, u64)> {
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; 4 << 20];
    let (mut len, mut newlines) = (0u64, 0u64);
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        len += n as u64;
        newlines += bytecount::count(&buf[..n], b'\n') as u64;
    }
    Ok((len, newlines))
}
