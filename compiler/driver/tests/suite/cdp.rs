//! A small client of the Chrome DevTools Protocol, enough for the
//! explorer's browser test: it starts headless Chromium, opens pages in
//! tabs, evaluates scripts, moves and clicks the mouse, types, and takes
//! screenshots.
//!
//! The protocol is JSON messages over one WebSocket to the browser
//! (RFC 6455: an HTTP upgrade, then frames; the client masks what it
//! sends). Each tab is a target the browser attaches a session to
//! (`flatten`), and a command names its session. Commands are answered in
//! order of their `id`; messages without one are events, which this client
//! does not need and skips.
//!
//! Written here rather than taken from a crate: the crates that do this
//! generate the whole protocol at build time and brought some 130 crates
//! into the test build, for the seven commands below.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A headless Chromium and the WebSocket it is driven over.
pub struct Browser {
    child: Child,
    profile: PathBuf,
    socket: TcpStream,
    next_id: u64,
}

/// A tab: the session attached to one page target.
pub struct Tab {
    target: String,
    session: String,
}

impl Browser {
    /// Starts `chromium` headless with a window of `width` x `height` and
    /// a fresh profile, and connects to it.
    pub fn launch(chromium: &Path, width: u32, height: u32) -> Browser {
        static LAUNCHED: AtomicUsize = AtomicUsize::new(0);
        let n = LAUNCHED.fetch_add(1, Ordering::Relaxed);
        let profile = std::env::temp_dir().join(format!("flowc-chromium-{}-{n}", std::process::id()));
        let mut child = Command::new(chromium)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.display()),
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", chromium.display()));
        // Chromium says where it listens on standard error.
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut said = String::new();
        let url = loop {
            let mut line = String::new();
            if stderr.read_line(&mut line).unwrap_or(0) == 0 {
                let _ = child.kill();
                panic!("Chromium exited without a DevTools address; it said:\n{said}");
            }
            if let Some(url) = line.trim().strip_prefix("DevTools listening on ") {
                break url.to_string();
            }
            said.push_str(&line);
        };
        // Keep draining standard error so Chromium never blocks on it.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let rest = url.strip_prefix("ws://").expect("a ws:// address");
        let (host, path) = rest.split_at(rest.find('/').expect("a path"));
        let socket = TcpStream::connect(host).expect("connecting to Chromium");
        socket.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut browser = Browser { child, profile, socket, next_id: 0 };
        browser.handshake(host, path);
        browser
    }

    /// The WebSocket opening handshake (the key is not secret here: one
    /// local client).
    fn handshake(&mut self, host: &str, path: &str) {
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: Zmxvd2MtZGV2dG9vbHMtMQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        self.socket.write_all(request.as_bytes()).unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            self.socket.read_exact(&mut byte).expect("the handshake's answer");
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head);
        assert!(head.starts_with("HTTP/1.1 101"), "Chromium refused the WebSocket:\n{head}");
    }

    /// Sends one text frame, masked as a client must.
    fn send(&mut self, text: &str) {
        let payload = text.as_bytes();
        let mut frame = vec![0x81u8];
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= 0xffff => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let mask = (self.next_id as u32).wrapping_mul(0x9e37_79b9).to_be_bytes();
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.socket.write_all(&frame).expect("writing to Chromium");
    }

    /// Reads one whole message (joining continuation frames; answering
    /// pings).
    fn receive(&mut self) -> String {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            self.socket.read_exact(&mut head).expect("reading from Chromium");
            let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0f);
            let len = match head[1] & 0x7f {
                126 => {
                    let mut b = [0u8; 2];
                    self.socket.read_exact(&mut b).unwrap();
                    u16::from_be_bytes(b) as usize
                }
                127 => {
                    let mut b = [0u8; 8];
                    self.socket.read_exact(&mut b).unwrap();
                    u64::from_be_bytes(b) as usize
                }
                n => n as usize,
            };
            assert!(head[1] & 0x80 == 0, "a server does not mask its frames");
            let mut payload = vec![0u8; len];
            self.socket.read_exact(&mut payload).expect("reading a frame");
            match opcode {
                0x8 => panic!("Chromium closed the connection"),
                0x9 => {
                    // A ping: answer with a pong carrying its payload.
                    let mut pong = vec![0x8a, 0x80 | payload.len() as u8, 0, 0, 0, 0];
                    pong.extend_from_slice(&payload);
                    self.socket.write_all(&pong).unwrap();
                }
                0xa => {}
                _ => {
                    message.extend_from_slice(&payload);
                    if fin {
                        return String::from_utf8(message).expect("UTF-8 from Chromium");
                    }
                }
            }
        }
    }

    /// Runs `method` with `params` (in `session`, or on the browser) and
    /// returns its result, or the protocol's error message.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut command = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            command["sessionId"] = json!(s);
        }
        self.send(&command.to_string());
        loop {
            let message: Value = serde_json::from_str(&self.receive()).expect("JSON from Chromium");
            if message["id"].as_u64() != Some(id) {
                continue; // an event
            }
            if let Some(error) = message.get("error") {
                return Err(format!("{method}: {error}"));
            }
            return Ok(message["result"].clone());
        }
    }

    fn run(&mut self, tab: &Tab, method: &str, params: Value) -> Value {
        self.call(Some(&tab.session), method, params).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Opens `url` in a new tab and waits (up to 30 s) until `ready`, a
    /// script, is true there.
    pub fn open(&mut self, url: &str, ready: &str) -> Tab {
        let target = self.call(None, "Target.createTarget", json!({ "url": "about:blank" })).unwrap();
        let target = target["targetId"].as_str().expect("a target id").to_string();
        let attached =
            self.call(None, "Target.attachToTarget", json!({ "targetId": target, "flatten": true })).unwrap();
        let session = attached["sessionId"].as_str().expect("a session id").to_string();
        let tab = Tab { target, session };
        self.run(&tab, "Page.navigate", json!({ "url": url }));
        assert!(self.wait_until(&tab, ready, Duration::from_secs(30)), "{url}: not ready ({ready}) after 30 s");
        tab
    }

    /// Evaluates `js` in the tab: its value as a string (JSON for other
    /// than strings, empty for `undefined`); a thrown exception panics.
    pub fn eval(&mut self, tab: &Tab, js: &str) -> String {
        let out =
            self.run(tab, "Runtime.evaluate", json!({ "expression": js, "returnByValue": true, "awaitPromise": true }));
        if let Some(e) = out.get("exceptionDetails") {
            panic!("evaluating {js}: {e}");
        }
        match &out["result"]["value"] {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    }

    fn mouse(&mut self, tab: &Tab, kind: &str, (x, y): (f64, f64)) {
        let (button, clicks) = if kind == "mouseMoved" { ("none", 0) } else { ("left", 1) };
        self.run(
            tab,
            "Input.dispatchMouseEvent",
            json!({ "type": kind, "x": x, "y": y, "button": button, "clickCount": clicks }),
        );
    }

    /// Moves the mouse to `at` (CSS pixels in the viewport).
    pub fn move_mouse(&mut self, tab: &Tab, at: (f64, f64)) {
        self.mouse(tab, "mouseMoved", at);
        self.settle(tab);
    }

    /// A real click: the mouse moved to `at`, pressed and released; then
    /// the page settles.
    pub fn click(&mut self, tab: &Tab, at: (f64, f64)) {
        self.mouse(tab, "mouseMoved", at);
        self.mouse(tab, "mousePressed", at);
        self.mouse(tab, "mouseReleased", at);
        self.settle(tab);
    }

    /// Waits until the tasks a click queued have run (a `<details>`
    /// element's `toggle` event, say) and a frame has been drawn.
    pub fn settle(&mut self, tab: &Tab) {
        self.eval(tab, "new Promise(r => setTimeout(() => requestAnimationFrame(() => setTimeout(() => r(1), 0)), 0))");
    }

    /// Waits (up to `limit`) until the script `condition` is true; false
    /// if it never was.
    pub fn wait_until(&mut self, tab: &Tab, condition: &str, limit: Duration) -> bool {
        let start = Instant::now();
        while self.eval(tab, &format!("!!({condition})")) != "true" {
            if start.elapsed() > limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    /// Types `text` into the focused element (an `input` event, as typing
    /// gives).
    pub fn type_text(&mut self, tab: &Tab, text: &str) {
        self.run(tab, "Input.insertText", json!({ "text": text }));
        self.settle(tab);
    }

    /// A PNG of the tab's viewport.
    pub fn screenshot(&mut self, tab: &Tab) -> Vec<u8> {
        let out = self.run(tab, "Page.captureScreenshot", json!({ "format": "png", "fromSurface": true }));
        base64_decode(out["data"].as_str().expect("screenshot data"))
    }

    pub fn close(&mut self, tab: Tab) {
        self.call(None, "Target.closeTarget", json!({ "targetId": tab.target })).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// Standard base64 (what the protocol sends binary data as).
fn base64_decode(text: &str) -> Vec<u8> {
    let digit = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a') as u32 + 26,
            b'0'..=b'9' => (c - b'0') as u32 + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {:?}", c as char),
        }
    };
    let clean: Vec<u8> = text.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let n = chunk.iter().fold(0u32, |acc, &c| acc << 6 | digit(c)) << (6 * (4 - chunk.len()));
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}

#[test]
fn base64_decodes_every_padding() {
    assert_eq!(base64_decode("aGk="), b"hi");
    assert_eq!(base64_decode("aGV5"), b"hey");
    assert_eq!(base64_decode("aA=="), b"h");
    assert_eq!(base64_decode("iVBORw0K"), b"\x89PNG\r\n");
}
