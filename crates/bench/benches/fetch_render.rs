//! `fetch_url` on a 10 MiB HTML page from a loopback server, beside `curl -s` of the same page
//! into /dev/null, and where the time goes: the fetch alone (`raw: true`, the same call path
//! without rendering) and html2text's rendering alone.
//!
//! Run: `cargo bench -p tackle-bench --bench fetch_render` (needs `curl` on PATH for the peer
//! column; without it only tackle's numbers are printed).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use tackle_bench::{Stats, ratio};
use tackle_gate::Pattern;
use tackle_net::PrivateHost;
use tackle_protocol::{CallId, ToolCall};
use tackle_runtime::{AllowAll, CancellationToken, Catalog, Runtime, RuntimeConfig, Session};
use tackle_tools::FetchUrl;
use tackle_tools::fetch_url::FetchSettings;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const PAGE_BYTES: usize = 10 * 1024 * 1024;
const SAMPLES: usize = 5;

/// Documentation-like HTML: headings, paragraphs with inline markup and links, lists, code.
fn page() -> Vec<u8> {
    let mut html = String::from("<!doctype html><html><head><title>Bench</title></head><body>\n");
    let mut i = 0usize;
    while html.len() < PAGE_BYTES {
        html.push_str(&format!(
            "<h2 id=\"s{i}\">Section {i}</h2>\n<p>The <code>fetch_url</code> tool reads <a href=\"/doc/{i}\">page {i}</a> \
             and renders <b>bold</b>, <i>italic</i> and plain text to eighty columns, wrapping long \
             sentences such as this one so that a model reads prose rather than markup.</p>\n\
             <ul><li>item one of {i}</li><li>item two with <em>emphasis</em></li></ul>\n\
             <pre>fn section_{i}() -&gt; usize {{ {i} }}</pre>\n"
        ));
        i += 1;
    }
    html.push_str("</body></html>\n");
    html.into_bytes()
}

fn serve(body: Arc<Vec<u8>>) -> BenchResult<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let body = body.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let mut head = Vec::new();
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(&body);
            });
        }
    });
    Ok(port)
}

fn sample(mut f: impl FnMut() -> BenchResult<()>) -> BenchResult<Stats> {
    f()?; // warm-up
    let mut v = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let start = Instant::now();
        f()?;
        v.push(start.elapsed());
    }
    Ok(Stats::of(&mut v))
}

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"fetch_render".contains(arg.as_str()))
    {
        return Ok(());
    }
    let body = Arc::new(page());
    let port = serve(body.clone())?;
    let url = format!("http://127.0.0.1:{port}/page.html");
    println!(
        "page: {:.1} MiB of HTML from {url}",
        body.len() as f64 / (1 << 20) as f64
    );

    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data");
    std::fs::create_dir_all(&base)?;
    let project = tempfile::tempdir_in(&base)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let scope = vec![Pattern::parse(&format!("http://127.0.0.1:{port}/*"))?];
    let settings = FetchSettings {
        allow_private_hosts: vec![PrivateHost::parse(&format!("127.0.0.1:{port}"))?],
        ..FetchSettings::default()
    };
    let runtime = Runtime::new(
        Catalog::new(vec![Arc::new(FetchUrl::new(&scope, settings))])?,
        Arc::new(AllowAll),
        RuntimeConfig::default(),
    );
    let session = Session::open(project.path())?;
    let call = |raw: bool| -> BenchResult<()> {
        let c = ToolCall {
            id: CallId("c".into()),
            name: "fetch_url".into(),
            arguments: serde_json::json!({ "url": url, "raw": raw }),
        };
        let r = rt.block_on(runtime.run_batch(&session, vec![c], CancellationToken::new()))?;
        if r[0].is_error {
            return Err(format!("fetch_url failed: {}", r[0].text()).into());
        }
        Ok(())
    };

    let rendered = sample(|| call(false))?;
    let fetched = sample(|| call(true))?;
    let render = sample(|| {
        html2text::from_read(&body[..], 80)?;
        Ok(())
    })?;
    println!("fetch_url, rendered (whole call): {rendered}");
    println!("fetch_url raw (fetch + retention): {fetched}");
    println!("html2text render alone:            {render}");
    println!(
        "render share of a rendered call:   {:.0}%",
        100.0 * render.median.as_secs_f64() / rendered.median.as_secs_f64()
    );

    let curl_ok = Command::new("curl").arg("--version").output().is_ok();
    if !curl_ok {
        println!("curl not found; install it to see the peer column");
        return Ok(());
    }
    let curl = sample(|| {
        let out = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "--noproxy", "*", &url])
            .status()?;
        if !out.success() {
            return Err(format!("curl failed: {out}").into());
        }
        Ok(())
    })?;
    println!("curl -s > /dev/null:               {curl}");
    println!(
        "ratios (median): rendered / curl = {:.1}x, raw / curl = {:.1}x",
        ratio(rendered.median, curl.median),
        ratio(fetched.median, curl.median)
    );
    Ok(())
}
