//! Render a long local Chinese page N times with headless Chromium and print the renders
//! per second and the bytes of each capture (the last capture can be kept to look at):
//!
//! ```text
//! cargo run --release -p zhiwen-ingest --example render_bench -- [N] [KEEP_DIR]
//! ```
//!
//! The page is served from this process on 127.0.0.1 (the address policy allows loopback
//! here only); renders run one after another, so the rate is one Chromium's.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;
use zhiwen_ingest::{find_chromium, render_page, AddressPolicy, RenderOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5);
    let keep = args.next().map(PathBuf::from);
    let chromium = find_chromium().ok_or("no chromium on PATH")?;

    let mut page =
        String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>第一章</title></head><body>");
    for i in 0..300 {
        page.push_str(&format!("<p>第{i}段：话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。</p>"));
    }
    page.push_str("</body></html>");
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = Url::parse(&format!("http://127.0.0.1:{}/chapter.html", listener.local_addr()?.port()))?;
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let page = page.clone();
            tokio::spawn(async move {
                let mut head = [0u8; 4096];
                let _ = sock.read(&mut head).await;
                let (status, body) = if head.starts_with(b"GET /chapter.html ") {
                    ("200 OK", page)
                } else {
                    ("404 Not Found", String::new())
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(response.as_bytes()).await;
            });
        }
    });

    let options = RenderOptions {
        policy: AddressPolicy { allow_loopback: true, allow_private: false },
        ..RenderOptions::new(chromium)
    };
    let (mut total, mut png_bytes, mut pdf_bytes) = (Duration::ZERO, 0, 0);
    let mut last = None;
    for i in 0..n {
        let started = Instant::now();
        let rendered = render_page(&url, &options).await?;
        let took = started.elapsed();
        total += took;
        png_bytes += rendered.screenshot_png.len();
        pdf_bytes += rendered.print_pdf.len();
        println!(
            "render {}: {took:.2?}, PNG {} bytes, PDF {} bytes",
            i + 1,
            rendered.screenshot_png.len(),
            rendered.print_pdf.len()
        );
        last = Some(rendered);
    }
    if n > 0 {
        println!(
            "{n} renders in {total:.2?}: {:.2} renders/s, {:.2?} per render, PNG {} bytes and PDF {} bytes per capture",
            n as f64 / total.as_secs_f64(),
            total / n as u32,
            png_bytes / n,
            pdf_bytes / n
        );
    }
    if let (Some(dir), Some(rendered)) = (keep, last) {
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("page.png"), &rendered.screenshot_png)?;
        std::fs::write(dir.join("page.pdf"), &rendered.print_pdf)?;
        println!("kept the last capture in {}", dir.display());
    }
    Ok(())
}
