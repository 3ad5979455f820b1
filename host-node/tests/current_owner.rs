//! This process's owner identity (seed 003 `OwnerId`) as read from the real
//! operating system.
#![cfg(target_os = "linux")]

use std::fs;

use leasehold::core::lease::same_host_incarnation;
use leasehold::liveness::{ProcStat, current_owner};

#[test]
fn each_call_is_a_new_incarnation_of_the_same_process() {
    let first = current_owner();
    let second = current_owner();
    assert_ne!(first.nonce, second.nonce);
    assert_eq!(first.nonce.len(), 36, "hyphenated uuid: {}", first.nonce);
    assert_eq!(first.pid, std::process::id());
    assert_eq!((&first.host_id, first.pid, first.start_time), (&second.host_id, second.pid, second.start_time));
    assert!(same_host_incarnation(&first, &second));
}

#[test]
fn host_id_is_machine_id_or_host_name_within_the_pid_namespace() {
    let owner = current_owner();
    let base = fs::read_to_string("/etc/machine-id")
        .ok()
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| rustix::system::uname().nodename().to_string_lossy().trim().to_owned());
    let namespace = fs::read_link("/proc/self/ns/pid").expect("pid namespace link");
    assert_eq!(owner.host_id, format!("{base}/{}", namespace.display()));
}

#[test]
fn start_time_is_field_22_of_own_stat() {
    let owner = current_owner();
    let line = fs::read_to_string(format!("/proc/{}/stat", std::process::id())).unwrap();
    assert_eq!(owner.start_time, Some(ProcStat::parse(&line).unwrap().start_time));
}

#[test]
fn boot_id_is_the_kernel_boot_id() {
    let owner = current_owner();
    let boot_id = fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    assert_eq!(owner.boot_id.as_deref(), Some(boot_id.trim()));
}
