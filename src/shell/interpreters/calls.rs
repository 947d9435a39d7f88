//! The calls of each language that run a command or delete a file, and what each does.

use super::lang::Lang;

/// What one call found in the code does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Does {
    /// Runs its first argument: a string as a shell line, a list as a command's words (a list's
    /// first string as a line with `shell=True`); several arguments (perl's, ruby's `system("rm",
    /// "-rf", "/")`) are a command's words.
    Run,
    /// Runs its first argument, a program, with the list that follows as its arguments (node's
    /// `spawn("rm", ["-rf", "/"])`).
    Spawn,
    /// `os.execvp(file, [argv0, args...])`: the list is the command's words.
    Exec,
    /// Deletes its arguments, as `rm` with these options.
    Delete(&'static str),
    /// Deletes its first argument: `rm -r` when the options it is given say `recursive`, else
    /// `rmdir` (node's `fs.rmdirSync`, `Deno.remove`) or `rm` (`fs.rmSync`).
    DeleteOptions(&'static str),
    Rmdir,
}

/// A call that runs or deletes: its names (as written with their qualifiers), its last part alone
/// (accepted also under another qualifier, or none) when the code mentions `context`.
pub(super) struct Call {
    lang: Lang,
    names: &'static [&'static str],
    bare: Option<(&'static str, &'static str)>,
    pub(super) does: Does,
}

const CALLS: &[Call] = &[
    // Python
    Call {
        lang: Lang::Python,
        names: &["os.system", "os.popen", "pty.spawn", "commands.getoutput"],
        bare: Some(("system", "import")),
        does: Does::Run,
    },
    Call {
        lang: Lang::Python,
        names: &[
            "subprocess.run",
            "subprocess.call",
            "subprocess.check_call",
            "subprocess.check_output",
            "subprocess.Popen",
            "subprocess.getoutput",
            "subprocess.getstatusoutput",
        ],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Python,
        names: &[
            "check_output",
            "check_call",
            "Popen",
            "getoutput",
            "getstatusoutput",
            "popen",
        ],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Python,
        names: &[
            "os.execvp",
            "os.execv",
            "os.execvpe",
            "os.execve",
            "os.spawnvp",
            "os.spawnv",
        ],
        bare: None,
        does: Does::Exec,
    },
    Call {
        lang: Lang::Python,
        names: &["shutil.rmtree", "rmtree"],
        bare: None,
        does: Does::Delete("-r"),
    },
    Call {
        lang: Lang::Python,
        names: &["os.remove", "os.unlink"],
        bare: None,
        does: Does::Delete(""),
    },
    Call {
        lang: Lang::Python,
        names: &["os.rmdir", "os.removedirs"],
        bare: None,
        does: Does::Rmdir,
    },
    // JavaScript (node, deno, bun)
    Call {
        lang: Lang::Js,
        names: &["execSync", "child_process.exec", "child_process.execSync"],
        bare: Some(("exec", "child_process")),
        does: Does::Run,
    },
    Call {
        lang: Lang::Js,
        names: &[
            "spawnSync",
            "execFileSync",
            "child_process.spawn",
            "child_process.execFile",
        ],
        bare: Some(("spawn", "child_process")),
        does: Does::Spawn,
    },
    Call {
        lang: Lang::Js,
        names: &["execFile"],
        bare: None,
        does: Does::Spawn,
    },
    Call {
        lang: Lang::Js,
        names: &["Bun.spawn", "Bun.spawnSync"],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Js,
        names: &["rmSync", "fs.rm", "fs.promises.rm", "fsp.rm"],
        bare: Some(("rm", "fs")),
        does: Does::DeleteOptions(""),
    },
    Call {
        lang: Lang::Js,
        names: &["rmdirSync", "fs.rmdir", "fs.promises.rmdir"],
        bare: None,
        does: Does::DeleteOptions("rmdir"),
    },
    Call {
        lang: Lang::Js,
        names: &["Deno.remove", "Deno.removeSync"],
        bare: None,
        does: Does::DeleteOptions(""),
    },
    Call {
        lang: Lang::Js,
        names: &["unlinkSync", "fs.unlink", "fs.promises.unlink"],
        bare: None,
        does: Does::Delete(""),
    },
    // Perl
    Call {
        lang: Lang::Perl,
        names: &["system", "exec"],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Perl,
        names: &[
            "rmtree",
            "remove_tree",
            "File::Path::rmtree",
            "File::Path::remove_tree",
        ],
        bare: None,
        does: Does::Delete("-r"),
    },
    Call {
        lang: Lang::Perl,
        names: &["unlink"],
        bare: None,
        does: Does::Delete(""),
    },
    Call {
        lang: Lang::Perl,
        names: &["rmdir"],
        bare: None,
        does: Does::Rmdir,
    },
    // Ruby
    Call {
        lang: Lang::Ruby,
        names: &[
            "system",
            "exec",
            "spawn",
            "Kernel.system",
            "Kernel.exec",
            "Process.spawn",
            "IO.popen",
            "Open3.capture2",
            "Open3.capture2e",
            "Open3.capture3",
            "Open3.popen3",
            "Open3.popen2",
        ],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Ruby,
        names: &[
            "FileUtils.rm_rf",
            "FileUtils.rm_r",
            "FileUtils.remove_dir",
            "FileUtils.remove_entry",
            "FileUtils.remove_entry_secure",
            "FileUtils.rmtree",
        ],
        bare: None,
        does: Does::Delete("-rf"),
    },
    Call {
        lang: Lang::Ruby,
        names: &[
            "FileUtils.rm",
            "FileUtils.rm_f",
            "FileUtils.remove",
            "File.delete",
            "File.unlink",
        ],
        bare: None,
        does: Does::Delete("-f"),
    },
    Call {
        lang: Lang::Ruby,
        names: &["Dir.rmdir", "Dir.delete", "Dir.unlink", "FileUtils.rmdir"],
        bare: None,
        does: Does::Rmdir,
    },
    // PHP
    Call {
        lang: Lang::Php,
        names: &[
            "system",
            "exec",
            "shell_exec",
            "passthru",
            "popen",
            "proc_open",
        ],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Php,
        names: &["unlink"],
        bare: None,
        does: Does::Delete(""),
    },
    Call {
        lang: Lang::Php,
        names: &["rmdir"],
        bare: None,
        does: Does::Rmdir,
    },
    // Lua
    Call {
        lang: Lang::Lua,
        names: &["os.execute", "io.popen"],
        bare: None,
        does: Does::Run,
    },
    Call {
        lang: Lang::Lua,
        names: &["os.remove"],
        bare: None,
        does: Does::Delete(""),
    },
    // awk
    Call {
        lang: Lang::Awk,
        names: &["system"],
        bare: None,
        does: Does::Run,
    },
];

/// The call `name` stands for in `lang`, in code that mentions the `contexts` given.
pub(super) fn call_of(lang: Lang, name: &str, contexts: &[&str]) -> Option<&'static Call> {
    let last = name.rsplit(['.', ':']).next().unwrap_or(name);
    // A module's alias (`cp.execSync`, `sp.check_output`): an unqualified name of the table under
    // any qualifier, in the languages whose modules are named so.
    let aliased = matches!(lang, Lang::Python | Lang::Js);
    CALLS.iter().find(|call| {
        call.lang == lang
            && (call.names.contains(&name)
                || (aliased
                    && call
                        .names
                        .iter()
                        .any(|n| !n.contains(['.', ':']) && *n == last))
                || call
                    .bare
                    .is_some_and(|(bare, context)| bare == last && contexts.contains(&context)))
    })
}

/// The words of `code` that allow a call's bare name (see [`Call`]), looked for once.
pub(super) fn contexts(code: &str) -> Vec<&'static str> {
    CALLS
        .iter()
        .filter_map(|call| call.bare.map(|(_, context)| context))
        .filter(|context| code.contains(context))
        .collect()
}
