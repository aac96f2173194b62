//! Stream decode: a 2 MiB streamed Chat Completions turn with 200 tool-call argument deltas
//! (four parallel calls, interleaved) from a loopback server, assembled by `tackle_llm::complete`,
//! beside `curl -N` reading the same stream into /dev/null.
//!
//! The figure that matters is the latency tackle adds after the server's last byte: the time
//! from the server's final write to the assembled turn (for curl: to its exit). Events/s is the
//! count of server-sent events over the time from the response's first byte to the assembled
//! turn.
//!
//! Run: `cargo bench -p tackle-bench --bench stream_decode` (needs `curl` on PATH for the peer
//! column; without it only tackle's numbers are printed).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tackle_bench::{Stats, ratio};
use tackle_llm::openai_chat::{OpenAiChat, OpenAiChatConfig};
use tackle_llm::{Transport, TransportLimits, TurnRequest, complete};
use tackle_protocol::Message;
use tokio_util::sync::CancellationToken;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const STREAM_BYTES: usize = 2 * 1024 * 1024;
const DELTAS: usize = 200;
const CALLS: usize = 4;
const SAMPLES: usize = 21;

/// The stream body and its number of events.
fn stream() -> (Vec<u8>, usize) {
    let mut body = String::new();
    let mut events = 0;
    let chunk = |delta: &str| {
        format!(
            "data: {{\"id\":\"chatcmpl-b\",\"object\":\"chat.completion.chunk\",\"model\":\"bench\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":null}}]}}\n\n"
        )
    };
    for call in 0..CALLS {
        body.push_str(&chunk(&format!(
            "{{\"tool_calls\":[{{\"index\":{call},\"id\":\"call_{call}\",\"type\":\"function\",\"function\":{{\"name\":\"write_file\",\"arguments\":\"{{\\\"path\\\":\\\"f{call}.txt\\\",\\\"content\\\":\\\"\"}}}}]}}"
        )));
        events += 1;
    }
    let per_delta = (STREAM_BYTES - body.len()) / DELTAS - 160;
    let filler: String = "lorem ipsum dolor sit amet "
        .chars()
        .cycle()
        .take(per_delta)
        .collect();
    for i in 0..DELTAS {
        let call = i % CALLS;
        body.push_str(&chunk(&format!(
            "{{\"tool_calls\":[{{\"index\":{call},\"function\":{{\"arguments\":\"{filler}\"}}}}]}}"
        )));
        events += 1;
    }
    for call in 0..CALLS {
        body.push_str(&chunk(&format!(
            "{{\"tool_calls\":[{{\"index\":{call},\"function\":{{\"arguments\":\"\\\"}}\"}}}}]}}"
        )));
        events += 1;
    }
    body.push_str(
        "data: {\"id\":\"chatcmpl-b\",\"model\":\"bench\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    );
    body.push_str("data: {\"id\":\"chatcmpl-b\",\"model\":\"bench\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":500000}}\n\ndata: [DONE]\n\n");
    events += 3;
    (body.into_bytes(), events)
}

/// When the server wrote a response's first and last bytes.
struct Served {
    first_byte: Instant,
    last_byte: Instant,
}

/// A loopback server that answers every request with `body` in 16 KiB writes and reports when
/// it wrote the first and last bytes.
fn serve(body: Arc<Vec<u8>>) -> BenchResult<(u16, mpsc::Receiver<Served>)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            conn.set_nodelay(true).ok();
            let mut buf = [0u8; 8192];
            let mut head = Vec::new();
            let header_end = loop {
                if let Some(at) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                    break at + 4;
                }
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break 0,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            };
            if header_end == 0 {
                continue;
            }
            let text = String::from_utf8_lossy(&head[..header_end]).to_ascii_lowercase();
            let length: usize = text
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            let mut have = head.len() - header_end;
            while have < length {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => have += n,
                }
            }
            let first_byte = Instant::now();
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
            );
            for piece in body.chunks(16 * 1024) {
                if conn.write_all(piece).is_err() {
                    break;
                }
            }
            let _ = conn.flush();
            let last_byte = Instant::now();
            drop(conn);
            let _ = tx.send(Served {
                first_byte,
                last_byte,
            });
        }
    });
    Ok((port, rx))
}

fn main() -> BenchResult<()> {
    // As the binary does first thing (see tackle_process::tune_allocator).
    tackle_process::tune_allocator();
    let (body, events) = stream();
    let (port, served) = serve(Arc::new(body.clone()))?;
    let url = format!("http://127.0.0.1:{port}/v1");
    // One thread: the connection task and the decoder hand chunks over without a futex wake,
    // as in a turn driven from a current-thread runtime.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let provider = OpenAiChat::new(
        OpenAiChatConfig::compatible("bench", url.clone()),
        Transport::new(TransportLimits::default())?,
    )?;
    let request = TurnRequest::new("bench", vec![Message::user_text("write four files")], 1024);

    let mut after_last = Vec::new();
    let mut rates = Vec::new();
    for _ in 0..SAMPLES {
        let turn = runtime.block_on(complete(&provider, &request, &CancellationToken::new()))?;
        let done = Instant::now();
        let times = served.recv()?;
        assert_eq!(
            turn.message.tool_calls().count(),
            CALLS,
            "every call assembled"
        );
        after_last.push(done.saturating_duration_since(times.last_byte));
        rates.push(done.saturating_duration_since(times.first_byte));
    }
    let tackle = Stats::of(&mut after_last);
    let whole = Stats::of(&mut rates);
    println!(
        "stream: {} bytes, {events} events, {DELTAS} tool-call deltas over {CALLS} calls",
        body.len()
    );
    println!("tackle, last byte → assembled turn: {tackle}");
    println!(
        "tackle, first byte → assembled turn: {whole}  ({:.0} events/s, {:.0} MiB/s at the median)",
        events as f64 / whole.median.as_secs_f64(),
        body.len() as f64 / whole.median.as_secs_f64() / (1024.0 * 1024.0)
    );

    if Command::new("curl").arg("--version").output().is_err() {
        println!("curl not found; install it to see the peer column");
        return Ok(());
    }
    let mut curl_after_last = Vec::new();
    for _ in 0..SAMPLES {
        let status = Command::new("curl")
            .args([
                "-sN",
                "-o",
                "/dev/null",
                "-X",
                "POST",
                "-H",
                "content-type: application/json",
            ])
            .args(["--data", "{}"])
            .arg(format!("{url}/chat/completions"))
            .status()?;
        let done = Instant::now();
        let times = served.recv_timeout(Duration::from_secs(30))?;
        if !status.success() {
            return Err(format!("curl failed: {status}").into());
        }
        curl_after_last.push(done.saturating_duration_since(times.last_byte));
    }
    let curl = Stats::of(&mut curl_after_last);
    println!("curl -N > /dev/null, last byte → exit: {curl}");
    println!(
        "tackle's added latency after the last byte (median): {:.3} ms; tackle / curl = {:.2}x",
        tackle.median.as_secs_f64() * 1000.0 - curl.median.as_secs_f64() * 1000.0,
        ratio(tackle.median, curl.median)
    );
    Ok(())
}
