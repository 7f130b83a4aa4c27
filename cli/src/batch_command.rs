//! `--batch-command[=<format>]`: git's command language on stdin, one command a line: `info <object>` (the
//! `--batch-check` line), `contents <object>` (the `--batch` answer), `flush` (under `--buffer`, the answers of
//! the commands queued since the last flush; git dies without `--buffer`). git's fatal errors for an empty line,
//! whitespace before a command, an unknown command, `info`/`contents` without an argument and `flush` with one.
//! Under `--buffer` a fatal error drops the answers still queued, as git's do.

use std::io::{BufRead, Write};

use odb_index_gix::Objects;

use crate::batch_check::{Format, answer_line};
use crate::stop::{GitFatal, Stop};

/// Run the commands on `input`, answering to `out` with `format` (`info`) and its `--batch` twin (`contents`);
/// `answered` runs after each flush of answers (the command's warnings).
pub fn run(
    objects: &Objects,
    format: &Format,
    buffer: bool,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    next_line: impl Fn(&mut dyn BufRead) -> std::io::Result<Option<Vec<u8>>>,
    answered: &mut dyn FnMut(),
) -> Result<(), Stop> {
    let (info, contents) = format.for_commands();
    let mut queued: Vec<(bool, Vec<u8>)> = Vec::new();
    let mut buf = Vec::new();
    let mut dispatch =
        |queued: &mut Vec<(bool, Vec<u8>)>, out: &mut dyn Write| -> Result<(), Stop> {
            for (with_contents, name) in queued.drain(..) {
                buf.clear();
                let f = if with_contents { &contents } else { &info };
                let answered = answer_line(objects, &name, f, &mut buf);
                out.write_all(&buf).map_err(Stop::Output)?;
                answered.map_err(|e| {
                    let _ = out.flush();
                    Stop::Git(e)
                })?;
            }
            out.flush().map_err(Stop::Output)?;
            answered();
            Ok(())
        };
    while let Some(line) = next_line(input).map_err(Stop::Input)? {
        let die = |msg: String| Err(Stop::Git(GitFatal(msg)));
        if line.is_empty() {
            return die("empty command in input".into());
        }
        // Past that check git reads the line as a C string.
        let line = line.split(|&c| c == 0).next().unwrap_or(&[]).to_vec();
        let text = String::from_utf8_lossy(&line).into_owned();
        if line
            .first()
            .is_some_and(|&c| c.is_ascii_whitespace() || c == 0x0b)
        {
            return die(format!("whitespace before command: '{text}'"));
        }
        let command = [("contents", true), ("info", true), ("flush", false)]
            .into_iter()
            .find_map(|(name, args)| Some((name, args, line.strip_prefix(name.as_bytes())?)));
        let Some((name, takes_args, after)) = command else {
            return die(format!("unknown command: '{text}'"));
        };
        if takes_args {
            let Some(arg) = after.strip_prefix(b" ") else {
                return die(format!("{name} requires arguments"));
            };
            let item = (name == "contents", arg.to_vec());
            queued.push(item);
            if !buffer {
                dispatch(&mut queued, out)?;
            }
        } else if !after.is_empty() {
            return die(format!("{name} takes no arguments"));
        } else if !buffer {
            return die("flush is only for --buffer mode".into());
        } else {
            dispatch(&mut queued, out)?;
        }
    }
    // git's test knob: under --buffer, what was not flushed is dropped at the end (t1006 checks flush with it).
    let no_flush = std::env::var("GIT_TEST_CAT_FILE_NO_FLUSH_ON_EXIT")
        .is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"));
    if buffer && no_flush {
        queued.clear();
    }
    dispatch(&mut queued, out)
}
