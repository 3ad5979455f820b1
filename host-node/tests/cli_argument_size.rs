//! A command line the kernel could not start (an argument of 128 KiB or
//! more: Linux passes at most 131,072 bytes in one argument, its NUL
//! included; a line run by `sh -c` is one argument as a whole) is refused
//! by `enqueue` and `run` with one clear line and exit status 2, and
//! nothing is queued for it, rather than failing every attempt later with
//! "Argument list too long".

mod cli_support;

use cli_support::Scratch;

/// A shell line (it holds `|`) of `bytes` bytes.
fn shell_line(bytes: usize) -> String {
    let head = "echo ";
    let tail = " | wc -c";
    format!("{head}{}{tail}", "z".repeat(bytes - head.len() - tail.len()))
}

/// Runs `args`, expecting the refusal: exit 2, one line naming `what` and the limit.
fn refused(s: &Scratch, args: &[&str], what: &str) {
    let out = s.cmd(args).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert_eq!(said.lines().count(), 1, "one line: {said}");
    assert!(said.contains(what) && said.contains("131071 bytes") && said.contains("nothing was queued"), "{said}");
}

/// What the queue holds, as `leasehold jobs` prints it.
fn jobs(s: &Scratch) -> String {
    let out = s.cmd(&["jobs"]).output().unwrap();
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn enqueue_refuses_words_that_make_a_shell_line_of_128_kib() {
    let s = Scratch::new();
    s.enqueue(&[], "true");
    // Two words of 70 KiB, one with a space: quoted, they make one `sh -c`
    // line of over 128 KiB, though each word alone was passed to us.
    let a = format!("a {}", "a".repeat(70 * 1024));
    let b = "b".repeat(70 * 1024);
    refused(&s, &["enqueue", "--", "echo", &a, &b], "the whole line");
    let listed = jobs(&s);
    assert_eq!(listed.matches("queued").count(), 1, "only the first job: {listed}");
}

#[test]
fn run_refuses_the_whole_file_naming_the_line_too_long_and_queues_none_of_it() {
    let s = Scratch::new();
    let long = shell_line(128 * 1024);
    let file = s.jobs_file(&["# a comment", "true", "", &long, "true"]);
    refused(&s, &["run", file.to_str().unwrap()], "line 4 of");
    let listed = jobs(&s);
    assert!(!listed.contains("queued") && !listed.contains("succeeded"), "nothing queued: {listed}");
}

#[test]
fn a_shell_line_one_byte_under_the_limit_is_queued_and_runs() {
    let s = Scratch::new();
    let file = s.jobs_file(&[&shell_line(128 * 1024 - 1)]);
    let out = s.cmd(&["run", file.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = cli_support::summary(&out.stdout);
    assert_eq!(summary["done"], "1", "{summary:?}");
}

#[test]
fn jobs_shortens_a_long_command_that_show_prints_whole() {
    let s = Scratch::new();
    let long = format!("echo {}", "y".repeat(100 * 1024));
    s.enqueue(&[], &long);
    s.enqueue(&[], "true");
    let listed = jobs(&s);
    assert!(listed.len() < 4 * 1024, "jobs printed {} bytes for two jobs", listed.len());
    assert!(listed.contains("echo yyy") && listed.contains('…'), "the start of the command, marked as cut: {listed}");
    let out = s.cmd(&["show", "1"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains(&long), "show prints the whole command");
}

#[test]
fn run_refuses_a_file_with_a_nul_or_a_line_not_utf8_naming_the_line_and_queues_none_of_it() {
    // It said only "invalid option `payload`: holds the NUL character" or "stream did not
    // contain valid UTF-8", naming neither the line nor that nothing was queued.
    let s = Scratch::new();
    for (bytes, said) in [
        (&b"true\n# note\necho t\0wo\ntrue\n"[..], "line 3 of jobs.txt holds the NUL character (a zero byte), which no command line can carry; nothing was queued"),
        (&b"true\n\necho caf\xe9 ok\ntrue\n"[..], "line 3 of jobs.txt is not UTF-8 text (byte 0xe9 at byte 9 of the line); nothing was queued"),
    ] {
        std::fs::write(s.path("jobs.txt"), bytes).unwrap();
        let out = s.cmd(&["run", "jobs.txt"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim_end(), format!("leasehold: {said}"));
        let listed = jobs(&s);
        assert!(!listed.contains("queued") && !listed.contains("succeeded"), "nothing queued: {listed}");
    }
    // From standard input alike.
    let out = s.cmd(&["run", "-"]).write_stdin(&b"true\n\xff\n"[..]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim_end(), "leasehold: line 2 of standard input is not UTF-8 text (byte 0xff at byte 1 of the line); nothing was queued");
}
