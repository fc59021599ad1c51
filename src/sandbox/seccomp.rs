//! A seccomp-BPF filter (handed to bubblewrap with `--seccomp`) that makes the system
//! calls a judged program never needs fail with EPERM: tracing and cross-process memory
//! access (ptrace, process_vm_readv/writev), kernel attack surface reachable without
//! privileges (bpf, perf_event_open, userfaultfd, io_uring, keyrings), creating or
//! entering namespaces (unshare, setns), mounts and the root (mount, umount2,
//! pivot_root, chroot and the new mount API), file handles (open_by_handle_at,
//! name_to_handle_at), and kernel administration (kexec, modules, swap, reboot, acct,
//! quotactl, syslog, vhangup; iopl/ioperm on x86-64). Foreign system-call ABIs (x32
//! numbers and i386 `int 0x80` on x86-64) kill the process with SIGSYS.
//! `tests/sandbox.rs` runs a program that tries each one.

/// One classic BPF instruction, laid out as the kernel's `struct sock_filter`.
#[derive(Debug, Clone, Copy)]
struct Insn {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x15;
const BPF_JMP_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
/// Offsets in `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// x32 system-call numbers carry this bit (on x86-64; no aarch64 number reaches it).
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;

/// The denied system calls of this architecture.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn denied() -> Vec<libc::c_long> {
    use libc::*;
    let mut v = vec![
        SYS_ptrace,
        SYS_process_vm_readv,
        SYS_process_vm_writev,
        SYS_kexec_load,
        SYS_kexec_file_load,
        SYS_bpf,
        SYS_perf_event_open,
        SYS_keyctl,
        SYS_add_key,
        SYS_request_key,
        SYS_userfaultfd,
        SYS_mount,
        SYS_umount2,
        SYS_pivot_root,
        SYS_swapon,
        SYS_swapoff,
        SYS_reboot,
        SYS_init_module,
        SYS_finit_module,
        SYS_delete_module,
        SYS_unshare,
        SYS_setns,
        SYS_open_by_handle_at,
        SYS_name_to_handle_at,
        SYS_io_uring_setup,
        SYS_io_uring_enter,
        SYS_io_uring_register,
        SYS_acct,
        SYS_quotactl,
        SYS_syslog,
        SYS_fsopen,
        SYS_fsconfig,
        SYS_fsmount,
        SYS_fspick,
        SYS_move_mount,
        SYS_open_tree,
        SYS_mount_setattr,
        SYS_vhangup,
        SYS_chroot,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([SYS_iopl, SYS_ioperm]);
    v
}

/// The compiled filter as the bytes bubblewrap reads from `--seccomp FD`, or `None`
/// on an architecture this module has no system-call table for.
pub fn filter_bytes() -> Option<Vec<u8>> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        let denied = denied();
        let n = denied.len();
        let mut prog = vec![
            Insn {
                code: BPF_LD_W_ABS,
                jt: 0,
                jf: 0,
                k: OFF_ARCH,
            },
            Insn {
                code: BPF_JMP_JEQ_K,
                jt: 1,
                jf: 0,
                k: AUDIT_ARCH,
            },
            Insn {
                code: BPF_RET_K,
                jt: 0,
                jf: 0,
                k: RET_KILL_PROCESS,
            },
            Insn {
                code: BPF_LD_W_ABS,
                jt: 0,
                jf: 0,
                k: OFF_NR,
            },
            // x32 system calls carry bit 30: a foreign ABI, kill (the KILL after
            // the ALLOW and the EPERM returns; BPF jumps only forward).
            Insn {
                code: BPF_JMP_JGE_K,
                jt: (n + 2) as u8,
                jf: 0,
                k: X32_SYSCALL_BIT,
            },
        ];
        for (i, nr) in denied.iter().enumerate() {
            // Jump to the EPERM return that follows the ALLOW.
            let to_deny = (n - i) as u8;
            prog.push(Insn {
                code: BPF_JMP_JEQ_K,
                jt: to_deny,
                jf: 0,
                k: *nr as u32,
            });
        }
        prog.push(Insn {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: RET_ALLOW,
        });
        prog.push(Insn {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: RET_ERRNO | libc::EPERM as u32,
        });
        prog.push(Insn {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: RET_KILL_PROCESS,
        });
        let mut out = Vec::with_capacity(prog.len() * 8);
        for i in prog {
            out.extend_from_slice(&i.code.to_ne_bytes());
            out.push(i.jt);
            out.push(i.jf);
            out.extend_from_slice(&i.k.to_ne_bytes());
        }
        Some(out)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Interpret the filter for one (arch, nr) pair: an independent check of the jump
    /// arithmetic.
    fn eval(prog: &[u8], arch: u32, nr: u32) -> u32 {
        let insns: Vec<(u16, u8, u8, u32)> = prog
            .chunks(8)
            .map(|c| {
                (
                    u16::from_ne_bytes([c[0], c[1]]),
                    c[2],
                    c[3],
                    u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
                )
            })
            .collect();
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let (code, jt, jf, k) = insns[pc];
            match code {
                BPF_LD_W_ABS => acc = if k == OFF_ARCH { arch } else { nr },
                BPF_JMP_JEQ_K | BPF_JMP_JGE_K => {
                    let hit = if code == BPF_JMP_JEQ_K {
                        acc == k
                    } else {
                        acc >= k
                    };
                    pc += if hit { jt as usize } else { jf as usize };
                }
                BPF_RET_K => return k,
                _ => panic!("unknown opcode {code:#x}"),
            }
            pc += 1;
        }
    }

    /// The calls the module doc (and docs/ARCHITECTURE.md, "sandbox") promise to
    /// deny, written out from the docs, independently of `denied()`.
    fn documented() -> Vec<libc::c_long> {
        use libc::*;
        let mut v = vec![
            // tracing and cross-process memory access
            SYS_ptrace,
            SYS_process_vm_readv,
            SYS_process_vm_writev,
            // kernel attack surface reachable without privileges
            SYS_bpf,
            SYS_perf_event_open,
            SYS_userfaultfd,
            SYS_io_uring_setup,
            SYS_io_uring_enter,
            SYS_io_uring_register,
            SYS_keyctl,
            SYS_add_key,
            SYS_request_key,
            // creating or entering namespaces
            SYS_unshare,
            SYS_setns,
            // mounts and the root
            SYS_mount,
            SYS_umount2,
            SYS_pivot_root,
            SYS_chroot,
            SYS_fsopen,
            SYS_fsconfig,
            SYS_fsmount,
            SYS_fspick,
            SYS_move_mount,
            SYS_open_tree,
            SYS_mount_setattr,
            // file handles
            SYS_open_by_handle_at,
            SYS_name_to_handle_at,
            // kernels, modules, swap, reboot, accounting, quotas, kernel log, ttys
            SYS_kexec_load,
            SYS_kexec_file_load,
            SYS_init_module,
            SYS_finit_module,
            SYS_delete_module,
            SYS_swapon,
            SYS_swapoff,
            SYS_reboot,
            SYS_acct,
            SYS_quotactl,
            SYS_syslog,
            SYS_vhangup,
        ];
        // I/O ports
        #[cfg(target_arch = "x86_64")]
        v.extend([SYS_iopl, SYS_ioperm]);
        v
    }

    #[test]
    fn denies_exactly_the_documented_calls() {
        let prog = filter_bytes().unwrap();
        let deny = RET_ERRNO | libc::EPERM as u32;
        let doc: std::collections::BTreeSet<u32> =
            documented().into_iter().map(|nr| nr as u32).collect();
        // Every number up to well past the highest system call of either
        // architecture: EPERM for the documented ones, ALLOW for everything else.
        for nr in 0..1024u32 {
            let want = if doc.contains(&nr) { deny } else { RET_ALLOW };
            assert_eq!(eval(&prog, AUDIT_ARCH, nr), want, "nr {nr}");
        }
        // Foreign ABIs kill: x32 numbers (bit 30) and another audit arch (i386).
        assert_eq!(
            eval(&prog, AUDIT_ARCH, X32_SYSCALL_BIT | 39),
            RET_KILL_PROCESS
        );
        assert_eq!(eval(&prog, AUDIT_ARCH, u32::MAX), RET_KILL_PROCESS);
        assert_eq!(eval(&prog, 0x4000_0003, 20), RET_KILL_PROCESS);
    }
}
