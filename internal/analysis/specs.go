package analysis

import (
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/analysis/opts"
)

// specFor returns the option grammar of program name, if it has one: those
// of the programs whose options decide what they run, change or read. A
// program without one is parsed with an empty spec (every option without a
// value), and Command.Parsed is false.
//
// Each is built when first asked for: building all ~100 took 0.7-1.2 ms, paid
// by every one-shot check, hook or run whatever its command (`echo hi` needs
// none), and a map built in init would be paid by every start of shellgate and
// of its sandbox helper.
func specFor(name string) (*opts.Spec, bool) {
	if s, ok := builtSpecs.Load(name); ok {
		return s.(*opts.Spec), true
	}
	build, ok := specMakers()[name]
	if !ok {
		return nil, false
	}
	s, _ := builtSpecs.LoadOrStore(name, build())
	return s.(*opts.Spec), true
}

// builtSpecs holds the grammars specFor has built, by program name.
var builtSpecs sync.Map

// specMakers build the grammars specFor returns, by program name.
var specMakers = sync.OnceValue(func() map[string]func() *opts.Spec {
	m := map[string]func() *opts.Spec{
		// coreutils and friends: GNU getopt_long, options anywhere.
		"rm": func() *opts.Spec {
			return opts.New("dfiIrRv", "dir", "force", "interactive=?", "no-preserve-root", "one-file-system", "preserve-root=?", "recursive", "verbose", "help", "version")
		},
		"rmdir": func() *opts.Spec {
			return opts.New("pv", "ignore-fail-on-non-empty", "parents", "verbose", "help", "version")
		},
		"unlink": func() *opts.Spec { return opts.New("", "help", "version") },
		"shred": func() *opts.Spec {
			return opts.New("fn:s:uvxz", "exact", "force", "iterations=", "random-source=", "remove=?", "size=", "verbose", "zero", "help", "version")
		},
		"touch": func() *opts.Spec {
			return opts.New("acd:fhmr:t:", "date=", "no-create", "no-dereference", "reference=", "time=", "help", "version")
		},
		"mkdir": func() *opts.Spec {
			return opts.New("m:pvZ", "context=?", "mode=", "parents", "verbose", "help", "version")
		},
		"mkfifo": func() *opts.Spec { return opts.New("m:Z", "context=?", "mode=", "help", "version") },
		"mknod":  func() *opts.Spec { return opts.New("m:Z", "context=?", "mode=", "help", "version") },
		"truncate": func() *opts.Spec {
			return opts.New("cor:s:", "io-blocks", "no-create", "reference=", "size=", "help", "version")
		},
		"tee": func() *opts.Spec {
			return opts.New("aip", "append", "ignore-interrupts", "output-error=?", "help", "version")
		},
		"mv": func() *opts.Spec {
			return opts.New("bfinS:t:TuvZ", "backup=?", "context", "debug", "exchange", "force", "interactive", "no-clobber", "no-copy",
				"no-target-directory", "strip-trailing-slashes", "suffix=", "target-directory=", "update=?", "verbose", "help", "version")
		},
		"cp": func() *opts.Spec {
			return opts.New("abdfHilLnPpRrsS:t:TuvxZ", "archive", "attributes-only", "backup=?", "context=?", "copy-contents", "debug",
				"dereference", "force", "interactive", "keep-directory-symlink", "link", "no-clobber", "no-dereference", "no-preserve=",
				"no-target-directory", "one-file-system", "parents", "preserve=?", "recursive", "reflink=?", "remove-destination",
				"sparse=", "strip-trailing-slashes", "suffix=", "symbolic-link", "target-directory=", "update=?", "verbose", "help", "version")
		},
		"install": func() *opts.Spec {
			return opts.New("bcCdDg:m:o:pPsS:t:TvZ", "backup=?", "compare", "context=?", "debug", "directory", "group=", "mode=", "owner=",
				"preserve-context", "preserve-timestamps", "strip", "strip-program=", "suffix=", "target-directory=", "no-target-directory",
				"verbose", "help", "version")
		},
		"ln": func() *opts.Spec {
			return opts.New("bdfFiLnPrsS:t:Tv", "backup=?", "directory", "force", "interactive", "logical", "no-dereference",
				"no-target-directory", "physical", "relative", "symbolic", "suffix=", "target-directory=", "verbose", "help", "version")
		},
		"chmod": func() *opts.Spec {
			return opts.New("cfvRHLP", "changes", "no-preserve-root", "preserve-root", "quiet", "recursive", "reference=", "silent", "verbose", "help", "version")
		},
		"chown": func() *opts.Spec {
			return opts.New("cfhvRHLP", "changes", "dereference", "from=", "no-dereference", "no-preserve-root", "preserve-root", "quiet",
				"recursive", "reference=", "silent", "verbose", "help", "version")
		},
		"chgrp": func() *opts.Spec {
			return opts.New("cfhvRHLP", "changes", "dereference", "no-dereference", "no-preserve-root", "preserve-root", "quiet",
				"recursive", "reference=", "silent", "verbose", "help", "version")
		},
		"chattr": func() *opts.Spec { return opts.New("p:v:RVf") },
		"setfacl": func() *opts.Spec {
			return opts.New("bkndRLPvhm:x:M:X:", "modify=", "remove=", "set=", "modify-file=", "remove-file=", "set-file=", "remove-all", "remove-default", "recursive", "test", "physical", "logical", "restore=", "no-mask", "mask", "default", "help", "version")
		},
		"sort": func() *opts.Spec {
			return opts.New("bcCdfghik:mMno:rRsS:t:T:uVz", "batch-size=", "buffer-size=", "check=?", "compress-program=", "debug",
				"dictionary-order", "field-separator=", "files0-from=", "general-numeric-sort", "human-numeric-sort", "ignore-case",
				"ignore-leading-blanks", "ignore-nonprinting", "key=", "merge", "month-sort", "numeric-sort", "output=", "parallel=",
				"random-sort", "random-source=", "reverse", "sort=", "stable", "temporary-directory=", "unique", "version-sort",
				"zero-terminated", "help", "version")
		},
		"uniq": func() *opts.Spec {
			return opts.New("cdDf:is:uw:z", "all-repeated=?", "check-chars=", "count", "group=?", "ignore-case", "repeated",
				"skip-chars=", "skip-fields=", "unique", "zero-terminated", "help", "version")
		},
		"split": func() *opts.Spec {
			return opts.New("a:b:C:del:n:t:ux", "additional-suffix=", "bytes=", "elide-empty-files", "filter=", "hex-suffixes=?",
				"line-bytes=", "lines=", "number=", "numeric-suffixes=?", "separator=", "suffix-length=", "unbuffered", "verbose", "help", "version")
		},
		"csplit": func() *opts.Spec {
			return opts.New("b:f:kn:szq", "digits=", "elide-empty-files", "keep-files", "prefix=", "quiet", "silent", "suffix-format=", "suppress-matched", "help", "version")
		},
		"sed": func() *opts.Spec {
			return opts.New("Ee:f:i::l:nrsuz", "binary", "debug", "expression=", "file=", "follow-symlinks", "in-place=?", "line-length=",
				"null-data", "posix", "quiet", "regexp-extended", "sandbox", "separate", "silent", "unbuffered", "zero-terminated", "help", "version")
		},
		"tar": func() *opts.Spec {
			return withChdir(opts.New("Ab:cC:dF:f:g:GhH:iI:jJkK:lL:mMN:oOpPrRsStT:uUvV:wWxX:zZ",
				"absolute-names", "acls", "after-date=", "anchored", "append", "atime-preserve=?", "auto-compress", "backup=?",
				"blocking-factor=", "bzip2", "catenate", "check-device", "checkpoint=?", "checkpoint-action=", "clamp-mtime", "compare",
				"compress", "concatenate", "confirmation", "create", "delay-directory-restore", "delete", "dereference", "diff",
				"directory=", "exclude=", "exclude-backups", "exclude-caches", "exclude-caches-all", "exclude-caches-under",
				"exclude-from=", "exclude-ignore=", "exclude-ignore-recursive=", "exclude-tag=", "exclude-tag-all=", "exclude-tag-under=",
				"exclude-vcs", "exclude-vcs-ignores", "extract", "file=", "files-from=", "force-local", "format=", "full-time", "get",
				"group=", "group-map=", "gunzip", "gzip", "hard-dereference", "hole-detection=", "ignore-case", "ignore-command-error",
				"ignore-failed-read", "ignore-zeros", "incremental", "index-file=", "info-script=", "interactive", "keep-directory-symlink",
				"keep-newer-files", "keep-old-files", "label=", "level=", "list", "listed-incremental=", "lzip", "lzma", "lzop", "mode=",
				"mtime=", "multi-volume", "new-volume-script=", "newer=", "newer-mtime=", "no-acls", "no-anchored", "no-auto-compress",
				"no-check-device", "no-delay-directory-restore", "no-ignore-case", "no-ignore-command-error", "no-null", "no-overwrite-dir",
				"no-quote-chars=", "no-recursion", "no-same-owner", "no-same-permissions", "no-seek", "no-selinux", "no-unquote",
				"no-verbatim-files-from", "no-wildcards", "no-wildcards-match-slash", "no-xattrs", "null", "numeric-owner", "occurrence=?",
				"old-archive", "one-file-system", "one-top-level=?", "overwrite", "overwrite-dir", "owner=", "owner-map=", "pax-option=",
				"portability", "posix", "preserve-order", "preserve-permissions", "quote-chars=", "quoting-style=", "read-full-records",
				"record-size=", "recursion", "recursive-unlink", "remove-files", "restrict", "rmt-command=", "rsh-command=", "same-order",
				"same-owner", "same-permissions", "seek", "selinux", "show-defaults", "show-omitted-dirs", "show-snapshot-field-ranges",
				"show-transformed-names", "show-stored-names", "skip-old-files", "sort=", "sparse", "sparse-version=", "starting-file=",
				"strip-components=", "suffix=", "tape-length=", "to-command=", "to-stdout", "totals=?", "touch", "transform=", "uncompress",
				"ungzip", "unlink-first", "unquote", "update", "use-compress-program=", "utc", "verbatim-files-from", "verbose", "verify",
				"version", "volno-file=", "warning=", "wildcards", "wildcards-match-slash", "xattrs", "xattrs-exclude=", "xattrs-include=",
				"xform=", "xz", "zstd", "help", "usage"), "C", "directory")
		},
		"rsync": func() *opts.Spec {
			return opts.New("ac:de:f:hlnoprtuvzB:CHIKLPRST:WxX", "rsh=", "rsync-path=", "filter=", "exclude=", "include=", "exclude-from=",
				"include-from=", "files-from=", "log-file=", "partial-dir=", "temp-dir=", "backup-dir=", "suffix=", "chmod=",
				"password-file=", "port=", "compare-dest=", "copy-dest=", "link-dest=", "remove-source-files", "archive", "verbose",
				"recursive", "delete", "dry-run", "compress", "checksum", "progress", "partial", "quiet", "human-readable", "stats",
				"itemize-changes", "times", "perms", "owner", "group", "links", "update", "inplace", "append", "backup", "out-format=",
				"info=", "debug=", "timeout=", "contimeout=", "bwlimit=", "max-size=", "min-size=", "size-only", "existing",
				"ignore-existing", "delete-after", "delete-before", "delete-during", "delete-excluded", "prune-empty-dirs", "relative",
				"mkpath", "no-implied-dirs", "one-file-system", "sparse", "whole-file", "hard-links", "acls", "xattrs", "help", "version")
		},
		"xargs": func() *opts.Spec {
			return withInOrder(opts.New("0a:d:E:e::I:i::J:L:l::n:oP:pR:rs:tx", "arg-file=", "delimiter=", "eof=?", "exit", "interactive", "max-args=",
				"max-chars=", "max-lines=?", "max-procs=", "no-run-if-empty", "null", "open-tty", "process-slot-var=", "replace=?",
				"show-limits", "verbose", "help", "version"))
		},
		"make": func() *opts.Spec {
			return withChdir(opts.New("bBC:dD:eE:f:hiI:j::kl::LnO::o:pqrRsStvwW:", "always-make", "assume-new=", "assume-old=", "check-symlink-times",
				"debug=?", "directory=", "dry-run", "environment-overrides", "eval=", "file=", "help", "ignore-errors", "include-dir=",
				"jobs=?", "jobserver-auth=", "jobserver-style=", "just-print", "keep-going", "load-average=?", "makefile=", "max-load=?",
				"new-file=", "no-builtin-rules", "no-builtin-variables", "no-keep-going", "no-print-directory", "no-silent", "old-file=",
				"output-sync=?", "print-data-base", "print-directory", "question", "quiet", "recon", "shuffle=?", "silent", "stop", "touch",
				"trace", "version", "warn-undefined-variables", "what-if="), "C", "directory")
		},
		"patch": func() *opts.Spec {
			return withChdir(opts.New("bB:cd:D:eEfF:g:i:lnNo:p:r:RsStTuvV:xY:z:Z", "backup", "backup-if-mismatch", "basename-prefix=", "batch",
				"binary", "context", "directory=", "dry-run", "ed", "force", "forward", "fuzz=", "get=", "ifdef=", "ignore-whitespace",
				"input=", "merge=?", "no-backup-if-mismatch", "normal", "output=", "posix", "prefix=", "quiet", "quoting-style=",
				"read-only=", "reject-file=", "reject-format=", "remove-empty-files", "reverse", "set-time", "set-utc", "silent", "strip=",
				"suffix=", "unified", "verbose", "version-control=", "help", "version"), "d", "directory")
		},
		// ninja: getopt_long, its few long options exact.
		"ninja": func() *opts.Spec {
			s := withChdir(opts.New("C:d:f:hj:k:l:nt:vw:", "help", "quiet", "verbose", "version"), "C")
			s.Exact = true
			return s
		},
		// just and gradle: their parsers take long options whole. Only the
		// options that take a value are listed: an unknown one then reads as
		// taking none, which can only miss a directory, never invent one.
		"just": func() *opts.Spec {
			s := withChdir(opts.New("d:f:", "working-directory=", "justfile=", "set=", "shell=", "shell-arg=", "dotenv-filename=", "dotenv-path=", "color=", "command=", "chooser=", "list-heading=", "list-prefix=", "show=", "usage="), "d", "working-directory")
			s.Exact = true
			return s
		},
		"gradle": func() *opts.Spec {
			s := withChdir(opts.New("b:c:D:g:I:P:p:x:", "build-file=", "settings-file=", "gradle-user-home=", "init-script=", "project-dir=", "project-cache-dir=", "exclude-task=", "include-build=", "max-workers=", "priority=", "console=", "warning-mode="), "p", "project-dir")
			s.Exact = true
			return s
		},
		"curl": func() *opts.Spec {
			return opts.New("o:O", "output=", "output-dir=", "remote-name", "config=", "upload-file=", "data=", "data-binary=", "cookie-jar=",
				"dump-header=", "trace=", "trace-ascii=", "stderr=", "etag-save=", "libcurl=", "hsts=", "alt-svc=", "manual", "help", "version")
		},
		"wget": func() *opts.Spec {
			return opts.New("a:BcdFhi:knNo:O:P:qrSvVx", "output-document=", "directory-prefix=", "output-file=", "append-output=", "input-file=",
				"execute=", "config=", "post-file=", "save-cookies=", "warc-file=", "rejected-log=", "help", "version")
		},
		"unzip": func() *opts.Spec { return opts.New("d:x:") },
		// virtualenv DEST (argparse: options anywhere, unique prefixes).
		"virtualenv": func() *opts.Spec {
			return opts.New("hp:qv", "activators=", "always-copy", "app-data=", "clear", "copies", "creator=", "discovery=",
				"download", "extra-search-dir=", "help", "never-download", "no-download", "no-pip", "no-periodic-update", "no-seed",
				"no-setuptools", "no-vcs-ignore", "no-wheel", "pip=", "prompt=", "python=", "quiet", "read-only-app-data",
				"reset-app-data", "seeder=", "setuptools=", "symlink-app-data", "symlinks", "system-site-packages", "try-first-with=",
				"upgrade-embed-wheels", "verbose", "version", "wheel=", "with-traceback")
		},
		"zip": func() *opts.Spec {
			return opts.New("b:n:x:i:I:t:TP:O:", "temp-path=", "suffixes=", "exclude=", "include=", "password=", "unzip-command=", "out=", "output-file=")
		},
		"gzip": func() *opts.Spec {
			return opts.New("cdfhklLnNqrS:tvV123456789", "stdout", "to-stdout", "decompress", "uncompress", "force", "help", "keep", "list", "license", "no-name", "name", "quiet", "recursive", "rsyncable", "suffix=", "synchronous", "test", "verbose", "version", "fast", "best")
		},
		"xxd": func() *opts.Spec {
			return opts.New("aAbCc:Eeg:hil:o:prs:uvR:d", "autoskip", "bits", "cols=", "EBCDIC", "groupsize=", "help", "include", "len=", "name=", "offset=", "postscript", "plain", "ps", "revert", "seek=", "uppercase", "version")
		},
		"mktemp": func() *opts.Spec {
			return opts.New("dp:qtu", "directory", "dry-run", "quiet", "suffix=", "tmpdir=?", "help", "version")
		},
		"env": func() *opts.Spec {
			return withInOrder(opts.New("0a:C:iP:S:u:v", "argv0=", "block-signal=?", "chdir=", "debug", "default-signal=?", "ignore-environment",
				"ignore-signal=?", "list-signal-handling", "null", "split-string=", "unset=", "help", "version"))
		},
		"timeout": func() *opts.Spec {
			return withInOrder(opts.New("fk:ps:v", "foreground", "kill-after=", "preserve-status", "signal=", "verbose", "help", "version"))
		},
		"nice": func() *opts.Spec { return withInOrder(opts.New("n:", "adjustment=", "help", "version")) },
		"stdbuf": func() *opts.Spec {
			return withInOrder(opts.New("e:i:o:", "error=", "input=", "output=", "help", "version"))
		},
		"nohup":  func() *opts.Spec { return withInOrder(opts.New("", "help", "version")) },
		"setsid": func() *opts.Spec { return withInOrder(opts.New("cfw", "ctty", "fork", "wait", "help", "version")) },
		"ionice": func() *opts.Spec {
			return withInOrder(opts.New("c:n:p:P:tu:", "class=", "classdata=", "pid=", "pgid=", "ignore", "uid=", "help", "version"))
		},
		"time": func() *opts.Spec {
			return withInOrder(opts.New("af:o:pqv", "append", "format=", "output=", "portability", "quiet", "verbose", "help", "version"))
		},
		"flock": func() *opts.Spec {
			return withInOrder(opts.New("c:E:Fnosuw:x", "close", "command=", "conflict-exit-code=", "exclusive", "fcntl", "no-fork", "nonblock", "shared", "timeout=", "unlock", "verbose", "wait=", "help", "version"))
		},
		"chroot": func() *opts.Spec {
			return withInOrder(opts.New("", "groups=", "skip-chdir", "userspec=", "help", "version"))
		},
		"watch": func() *opts.Spec {
			return withInOrder(opts.New("bcCd::egn:pq:rtwx", "beep", "color", "no-color", "differences=?", "errexit", "chgexit", "equexit=",
				"interval=", "precise", "no-rerun", "no-title", "no-wrap", "exec", "no-linewrap", "help", "version"))
		},
		"taskset": func() *opts.Spec {
			return withInOrder(opts.New("acp", "all-tasks", "cpu-list", "pid", "help", "version"))
		},
		"prlimit": func() *opts.Spec {
			return withInOrder(opts.New("p:ohr", "as=?", "core=?", "cpu=?", "data=?", "fsize=?", "locks=?", "memlock=?", "msgqueue=?", "nice=?", "nofile=?", "nproc=?", "rss=?", "rtprio=?", "rttime=?", "sigpending=?", "stack=?", "pid=", "output=", "noheadings", "raw", "verbose", "help", "version"))
		},
		"chrt": func() *opts.Spec {
			return withInOrder(opts.New("abdefiopRrT:P:D:mv", "all-tasks", "batch", "deadline", "fifo", "idle", "other", "pid", "reset-on-fork", "rr", "sched-runtime=", "sched-period=", "sched-deadline=", "max", "verbose", "help", "version"))
		},
		"setarch": func() *opts.Spec {
			return withInOrder(opts.New("vRFZLXBIST3", "verbose", "addr-no-randomize", "fdpic-funcptrs", "mmap-page-zero", "addr-compat-layout", "read-implies-exec", "32bit", "short-inode", "whole-seconds", "sticky-timeouts", "3gb", "4gb", "uname-2.6", "list", "help", "version"))
		},
		"setpriv": func() *opts.Spec {
			return withInOrder(opts.New("d", "dump", "no-new-privs", "ambient-caps=", "inh-caps=", "bounding-set=", "ruid=", "euid=", "rgid=", "egid=", "reuid=", "regid=", "clear-groups", "keep-groups", "init-groups", "groups=", "securebits=", "pdeathsig=", "selinux-label=", "apparmor-profile=", "landlock-access=", "landlock-rule=", "reset-env", "help", "version"))
		},
		"unshare": func() *opts.Spec {
			return withInOrder(opts.New("m::u::i::n::p::U::C::T::frS:G:R:w:", "mount=?", "uts=?", "ipc=?", "net=?", "pid=?", "user=?", "cgroup=?", "time=?", "fork", "kill-child=?", "mount-proc=?", "map-root-user", "map-current-user", "map-user=", "map-group=", "map-users=", "map-groups=", "map-auto", "propagation=", "setgroups=", "keep-caps", "setuid=", "setgid=", "root=", "wd=", "monotonic=", "boottime=", "help", "version"))
		},
		"nsenter": func() *opts.Spec {
			return withInOrder(opts.New("at:m::u::i::n::p::U::C::T::S:G:r::w::FZ", "all", "target=", "mount=?", "uts=?", "ipc=?", "net=?", "pid=?", "user=?", "cgroup=?", "time=?", "setuid=", "setgid=", "preserve-credentials", "root=?", "wd=?", "no-fork", "follow-context", "help", "version"))
		},
		"runuser": func() *opts.Spec {
			return withInOrder(opts.New("c:fg:G:lmps:u:Pw:", "command=", "fast", "group=", "supp-group=", "login", "preserve-environment", "shell=", "user=", "pty", "session-command=", "whitelist-environment=", "help", "version"))
		},
		"su": func() *opts.Spec {
			return withInOrder(opts.New("c:fg:G:lmps:Pw:", "command=", "fast", "group=", "supp-group=", "login", "preserve-environment", "shell=", "pty", "session-command=", "whitelist-environment=", "help", "version"))
		},
		"sudo": func() *opts.Spec {
			return withInOrder(opts.New("AbC:D:Eeg:HhiKklnPp:R:r:SsT:t:U:u:Vv", "askpass", "background", "chdir=", "chroot=", "close-from=", "command-timeout=", "edit", "group=", "help", "host=", "list", "login", "non-interactive", "other-user=", "preserve-env=?", "preserve-groups", "prompt=", "remove-timestamp", "reset-timestamp", "role=", "set-home", "shell", "stdin", "type=", "user=", "validate", "version"))
		},
		"script": func() *opts.Spec {
			return opts.New("aB:c:eE:fI:l:m:O:qT:t::", "append", "command=", "echo=", "flush", "force", "log-in=", "log-io=", "log-out=", "log-timing=", "logging-format=", "output-limit=", "quiet", "return", "timing=?", "help", "version")
		},
		"systemd-run": func() *opts.Spec {
			return withInOrder(opts.New("p:E:M:H:u:GqrtPS", "unit=", "property=", "description=", "slice=", "setenv=", "uid=", "gid=", "nice=", "working-directory=", "machine=", "host=", "user", "system", "scope", "pty", "pipe", "wait", "collect", "quiet", "remain-after-exit", "same-dir", "shell", "service-type=", "on-calendar=", "on-active=", "help", "version"))
		},
		"firejail": func() *opts.Spec { return withInOrder(opts.New("")) },
		"command":  func() *opts.Spec { return withInOrder(opts.New("pvV")) },
		"exec":     func() *opts.Spec { return withInOrder(opts.New("a:cl")) },
		"doas":     func() *opts.Spec { return withInOrder(opts.New("a:C:Lnsu:")) },
		"pkexec": func() *opts.Spec {
			return withInOrder(opts.New("", "user=", "disable-internal-agent", "keep-cwd", "help", "version"))
		},
		"strace": func() *opts.Spec {
			return withInOrder(opts.New("a:b:cCdDe:E:fFhiI:kno:O:p:P:qrs:S:tTu:U:vVwxX:yYzZ", "output=", "attach=", "trace=", "signal=", "env=", "user=", "trace-path=", "string-limit=", "summary-sort-by="))
		},
		"ltrace": func() *opts.Spec {
			return withInOrder(opts.New("a:A:bcCDe:E:fF:hiLl:n:o:p:rs:Stu:Vw:x:X:", "output=", "library=", "indent=", "align="))
		},
		"caffeinate": func() *opts.Spec { return withInOrder(opts.New("dimsuw:t:")) },
		"sg":         func() *opts.Spec { return withInOrder(opts.New("c:")) },
		"tail": func() *opts.Spec {
			return opts.New("c:fFn:qs:vz", "bytes=", "follow=?", "lines=", "max-unchanged-stats=", "pid=", "quiet", "retry", "silent", "sleep-interval=", "verbose", "zero-terminated", "debug", "help", "version")
		},
		"dmesg": func() *opts.Spec {
			return opts.New("CcDdEeF:f:HhkLl:n:PprSs:TtuwxV", "clear", "read-clear", "console-off", "show-delta", "reltime", "console-on", "file=", "facility=", "human", "json", "kernel", "color=?", "level=", "console-level=", "noescape", "nopager", "force-prefix", "raw", "syslog", "buffer-size=", "ctime", "notime", "since=", "until=", "userspace", "follow", "follow-new", "decode", "time-format=", "help", "version")
		},
		"rg": func() *opts.Spec {
			return opts.New("e:f:g:m:t:T:A:B:C:j:M:", "pre=", "pre-glob=", "hostname-bin=", "regexp=", "file=", "glob=", "type=", "max-count=", "replace=", "help", "version")
		},
		"ssh": func() *opts.Spec {
			return opts.New("46AaCfGgKkMNnqsTtVvXxYyB:b:c:D:E:e:F:I:i:J:L:l:m:O:o:P:p:Q:R:S:W:w:")
		},
		"scp":  func() *opts.Spec { return opts.New("346ABCOpqRrsTvc:D:F:i:J:l:o:P:S:X:") },
		"sftp": func() *opts.Spec { return opts.New("46AaCfNpqrvB:b:c:D:F:i:J:l:o:P:R:S:s:X:") },
		"man": func() *opts.Spec {
			return opts.New("C:d:D:acfhiIklL:m:M:p:P:rR:S:s:tTuwWZE:H::X::", "pager=", "config-file=", "where", "path", "location", "whatis", "apropos", "local-file", "help", "version")
		},
		"fd": func() *opts.Spec {
			return opts.New("HIsiLlpauFgd:t:e:E:x:X:j:c:o:S:", "exec=", "exec-batch=", "type=", "extension=", "exclude=", "max-depth=", "min-depth=", "exact-depth=", "threads=", "hidden", "no-ignore", "help", "version")
		},
		"awk": func() *opts.Spec {
			return opts.New("bcCdDe:E:f:F:gi:l:L::MnNo::Op::PrsStv:V", "file=", "field-separator=", "assign=", "source=", "include=", "load=", "exec=", "bignum", "characters-as-bytes", "traditional", "copyright", "debug=?", "dump-variables=?", "gen-pot", "help", "lint=?", "non-decimal-data", "optimize", "no-optimize", "posix", "pretty-print=?", "profile=?", "re-interval", "sandbox", "use-lc-numeric", "version")
		},
		"gawk": func() *opts.Spec {
			return opts.New("bcCdDe:E:f:F:gi:l:L::MnNo::Op::PrsStv:V", "file=", "field-separator=", "assign=", "source=", "include=", "load=", "exec=", "bignum", "characters-as-bytes", "traditional", "copyright", "debug=?", "dump-variables=?", "gen-pot", "help", "lint=?", "non-decimal-data", "optimize", "no-optimize", "posix", "pretty-print=?", "profile=?", "re-interval", "sandbox", "use-lc-numeric", "version")
		},
		"mawk":    func() *opts.Spec { return opts.New("f:F:v:W:") },
		"nawk":    func() *opts.Spec { return opts.New("f:F:v:") },
		"read":    func() *opts.Spec { return opts.New("a:d:ei:n:N:p:rst:u:") },
		"printf":  func() *opts.Spec { return opts.New("v:") },
		"declare": func() *opts.Spec { return opts.New("aAfFgiIlnprtux") },
		"typeset": func() *opts.Spec { return opts.New("aAfFgiIlnprtux") },
		"local":   func() *opts.Spec { return opts.New("aAfFgiIlnprtux") },
		"shopt":   func() *opts.Spec { return opts.New("opqsu") },
		"parallel": func() *opts.Spec {
			return withInOrder(opts.New("0a:d:E:I:j:kn:N:P:qrS:tuvX", "arg-file=", "delimiter=", "jobs=", "keep-order", "max-args=", "sshlogin=", "null", "quote", "tag", "verbose", "dry-run", "halt=", "timeout=", "joblog=", "results=", "colsep=", "bar", "eta", "progress", "pipe", "line-buffer", "group", "ungroup", "workdir=", "env=", "help", "version",
				"basefile=", "bf=", "return=", "transferfile=", "tf=", "wd=", "slf=", "sshloginfile=", "ssh=", "sshdelay=", "arg-sep=", "arg-file-sep="))
		},
		"nix-shell": func() *opts.Spec {
			return opts.New("p:A:I:E:", "run=", "command=", "packages=", "pure", "attr=", "expr=", "arg=", "argstr=", "keep=", "help", "version")
		},
		"ssh-keygen": func() *opts.Spec {
			return opts.New("ABb:C:cD:E:eF:f:gHhI:i:J:j:KkLlM:m:N:n:O:P:pQqR:r:s:t:U:uvV:w:Y:yz:Z:")
		},
		"gpg": func() *opts.Spec {
			return opts.New("abcdeo:r:u:sv", "output=", "recipient=", "local-user=", "armor", "batch", "yes", "symmetric", "passphrase=", "pinentry-mode=", "decrypt", "encrypt", "sign", "detach-sign", "clearsign", "verify", "import", "export", "list-keys", "homedir=", "help", "version")
		},
		"objcopy": func() *opts.Spec {
			return opts.New("I:O:B:j:R:K:N:GgSXxp", "input-target=", "output-target=", "target=", "only-section=", "remove-section=", "strip-all", "strip-debug", "help", "version")
		},
		"strip": func() *opts.Spec {
			return opts.New("F:I:O:o:R:K:N:gsSpvxX", "output-format=", "input-target=", "target=", "remove-section=", "keep-symbol=", "strip-symbol=", "strip-all", "strip-debug", "preserve-dates", "help", "version")
		},
		"npx": func() *opts.Spec {
			return withInOrder(opts.New("c:p:qy", "call=", "package=", "yes", "no", "quiet", "registry=", "prefix=", "ignore-existing", "no-install", "help", "version"))
		},
		"mapfile":   func() *opts.Spec { return opts.New("C:c:d:n:O:s:tu:") },
		"readarray": func() *opts.Spec { return opts.New("C:c:d:n:O:s:tu:") },
		"compgen":   func() *opts.Spec { return opts.New("abcdefgjksuvo:A:G:W:F:C:X:P:S:") },
		"complete":  func() *opts.Spec { return opts.New("abcdefgjksuvprDEIo:A:G:W:F:C:X:P:S:") },
		"fzf": func() *opts.Spec {
			return opts.New("ef:imq:x", "filter=", "query=", "exact", "extended", "multi", "bash", "zsh", "fish", "height=", "layout=", "preview=", "bind=", "execute=", "help", "version")
		},
	}
	m["gradlew"] = m["gradle"] // the project's own launcher of gradle
	// pkill and pgrep (procps), killall (psmisc): which processes they pick.
	m["pkill"] = func() *opts.Spec {
		return opts.New("c:d:efF:g:G:ilnoP:rs:t:u:U:vwx", "count", "delimiter=", "echo", "exact", "full", "group=", "pgroup=", "ignore-case",
			"inverse", "lightweight", "list-name", "list-full", "logpidfile", "newest", "oldest", "older=", "parent=", "pidfile=", "runstates=",
			"session=", "signal=", "terminal=", "euid=", "uid=", "ns=", "nslist=", "cgroup=", "env=", "ignore-ancestors", "require-handler",
			"help", "version")
	}
	m["pgrep"] = m["pkill"]
	m["killall"] = func() *opts.Spec {
		return opts.New("egiIlno:qrs:u:vwy:Z:", "exact", "ignore-case", "process-group", "interactive", "list", "quiet", "regexp",
			"signal=", "user=", "verbose", "version", "wait", "younger-than=", "older-than=", "context=", "ns=", "help")
	}
	// gdb: getopt_long_only with no short options: -ex, --ex, -eval-command,
	// -eval are one option.
	m["gdb"] = func() *opts.Spec {
		s := opts.New("", "annotate=", "args", "async", "b=", "batch", "batch-silent", "baud=", "c=", "cd=", "command=", "configuration",
			"core=", "d=", "D=", "data-directory=", "dbx", "directory=", "e=", "early-init-command=", "early-init-eval-command=", "eiex=", "eix=",
			"epoch", "eval-command=", "ex=", "exec=", "fullname", "help", "i=", "iex=", "init-command=", "init-eval-command=", "interpreter=",
			"ix=", "l=", "n", "nh", "noasync", "nowindows", "nw", "nx", "p=", "pid=", "q", "quiet", "r", "readnever", "readnow", "s=", "se=",
			"silent", "statistics", "symbols=", "tty=", "tui", "version", "w", "windows", "write", "x=")
		s.LongOnly = true
		return s
	}
	// lldb: LLVM's option table, long options whole.
	m["lldb"] = func() *opts.Spec {
		s := opts.New("a:bc:f:hk:K:n:o:O:p:Ps:S:vwxX", "arch=", "attach-name=", "attach-pid=", "batch", "core=", "debug", "editor", "file=",
			"help", "local-lldbinit", "no-lldbinit", "no-use-colors", "one-line=", "one-line-before-file=", "one-line-on-crash=", "python-path",
			"print-script-interpreter-info", "repl=?", "repl-language=", "script-language=", "source=", "source-before-file=",
			"source-on-crash=", "source-quietly", "version", "wait-for")
		s.Exact = true
		return s
	}
	return m
})

// withInOrder marks a spec whose options end at the first operand: the
// command the wrapper runs.
func withChdir(s *opts.Spec, names ...string) *opts.Spec {
	s.Chdir = names
	return s
}

func withInOrder(s *opts.Spec) *opts.Spec {
	s.InOrder = true
	return s
}

func exactInOrder(s *opts.Spec) *opts.Spec {
	s.InOrder, s.Exact = true, true
	return s
}

// gitGlobal are git's own options, before the subcommand. git reads them
// exactly, one at a time, and stops at the first word that is not one.
var gitGlobal = func() *opts.Spec {
	s := opts.New("C:c:hpPv", "bare", "config-env=", "exec-path=?", "git-dir=", "glob-pathspecs", "help", "html-path",
		"icase-pathspecs", "info-path", "list-cmds=", "literal-pathspecs", "man-path", "namespace=", "no-advice", "no-lazy-fetch",
		"no-optional-locks", "no-pager", "no-replace-objects", "noglob-pathspecs", "paginate", "super-prefix=", "version", "work-tree=", "attr-source=")
	s.InOrder, s.Exact = true, true
	return s
}()

// gitSpecs are the grammars of git subcommands (git's parse-options accepts
// unique prefixes of long options, like getopt_long), built on first use too.
var gitSpecs = sync.OnceValue(func() map[string]*opts.Spec {
	return map[string]*opts.Spec{
		"clone": opts.New("b:c:jlnqso:u:v", "bare", "branch=", "bundle-uri=", "config=", "depth=", "dissociate", "filter=", "jobs=",
			"local", "mirror", "no-checkout", "no-hardlinks", "no-tags", "origin=", "progress", "quiet", "recurse-submodules=?",
			"recursive=?", "reference=", "reference-if-able=", "ref-format=", "reject-shallow", "remote-submodules", "revision=",
			"separate-git-dir=", "server-option=", "shallow-exclude=", "shallow-since=", "shallow-submodules", "single-branch",
			"sparse", "tags", "template=", "upload-pack=", "verbose", "also-filter-submodules", "no-reject-shallow"),
		"init": opts.New("b:q", "bare", "initial-branch=", "object-format=", "quiet", "ref-format=", "separate-git-dir=", "shared=?", "template="),
		"config": opts.New("e:f:lz", "add", "blob=", "bool", "bool-or-int", "bool-or-str", "comment=", "default=", "edit", "expiry-date",
			"file=", "fixed-value", "get", "get-all", "get-color", "get-colorbool", "get-regexp", "get-urlmatch", "global", "includes", "int",
			"list", "local", "name-only", "no-includes", "null", "path", "remove-section", "rename-section", "replace-all", "show-origin",
			"show-scope", "system", "type=", "unset", "unset-all", "value=", "worktree", "all", "regexp", "url="),
		"switch": opts.New("c:C:dfmqt::", "create=", "force-create=", "detach", "guess", "no-guess", "force", "discard-changes", "merge",
			"conflict=", "quiet", "progress", "no-progress", "track=?", "no-track", "orphan=", "ignore-other-worktrees",
			"recurse-submodules=?", "no-recurse-submodules"),
		"rm":               opts.New("fnqr", "cached", "dry-run", "force", "ignore-unmatch", "quiet", "sparse", "pathspec-from-file=", "pathspec-file-nul"),
		"checkout-index":   opts.New("afnqu", "all", "force", "ignore-skip-worktree-bits", "index", "no-create", "prefix=", "quiet", "stage=", "stdin", "temp", "z"),
		"rev-list":         opts.New("n:", "all", "output=", "max-count=", "objects", "reverse", "count", "branches=?", "tags=?", "remotes=?", "since=", "until=", "author=", "grep="),
		"archive":          opts.New("lo:v", "exec=", "format=", "list", "output=", "prefix=", "remote=", "verbose", "worktree-attributes", "add-file=", "add-virtual-file=", "mtime="),
		"format-patch":     opts.New("knNo:pqsv:", "output-directory=", "output=", "stdout", "numbered", "cover-letter", "subject-prefix=", "signoff", "thread=?", "to=", "cc=", "from=?", "base=", "reroll-count=", "suffix=", "start-number="),
		"bundle":           opts.New("q", "quiet", "progress", "all", "version="),
		"worktree":         opts.New("b:B:dfq", "checkout", "detach", "force", "guess-remote", "lock", "no-checkout", "orphan", "quiet", "reason=", "track", "no-track", "relative-paths", "expire=", "porcelain", "verbose", "z"),
		"apply":            opts.New("3p:C:Rvz", "3way", "allow-empty", "apply", "build-fake-ancestor=", "cached", "check", "directory=", "exclude=", "include=", "index", "intent-to-add", "numstat", "recount", "reject", "reverse", "stat", "summary", "unidiff-zero", "unsafe-paths", "verbose", "whitespace=", "inaccurate-eof", "ignore-space-change", "ignore-whitespace", "quiet"),
		"diff":             opts.New("pu", "output=", "stat=?", "name-only", "name-status", "cached", "staged", "no-index", "patch", "exit-code", "quiet", "ext-diff", "no-ext-diff", "textconv", "no-textconv"),
		"log":              opts.New("n:p", "output=", "oneline", "graph", "all", "stat=?", "patch", "format=", "pretty=?", "max-count=", "ext-diff", "no-ext-diff", "textconv", "no-textconv"),
		"show":             opts.New("p", "output=", "stat=?", "format=", "pretty=?", "name-only", "ext-diff", "no-ext-diff", "textconv", "no-textconv"),
		"credential-store": opts.New("", "file="),
		"update-index":     opts.New("gqz", "add", "cacheinfo=", "chmod=", "force-remove", "index-info", "refresh", "remove", "replace", "stdin", "verbose", "really-refresh", "assume-unchanged", "no-assume-unchanged", "skip-worktree", "no-skip-worktree"),
		"add":              opts.New("efinpuvAN", "all", "chmod=", "dry-run", "edit", "force", "ignore-errors", "ignore-missing", "ignore-removal", "intent-to-add", "interactive", "no-all", "no-ignore-removal", "patch", "pathspec-from-file=", "refresh", "renormalize", "sparse", "update", "verbose"),
		"commit": opts.New("aC:c:eF:hinm:opqsS::t:uvz", "all", "allow-empty", "allow-empty-message", "amend", "author=", "branch", "cleanup=",
			"date=", "dry-run", "edit", "file=", "fixup=", "gpg-sign=?", "include", "interactive", "long", "message=", "no-edit", "no-gpg-sign",
			"no-post-rewrite", "no-status", "no-verify", "null", "only", "patch", "pathspec-from-file=", "porcelain", "quiet",
			"reedit-message=", "reset-author", "reuse-message=", "short", "signoff", "squash=", "status", "template=", "trailer=",
			"untracked-files=?", "verbose", "verify"),
		"rebase":      opts.New("iC:kmnqs:vx:X:", "abort", "autosquash", "autostash", "continue", "edit-todo", "exec=", "interactive", "onto=", "quit", "root", "skip", "strategy=", "strategy-option=", "update-refs", "verbose"),
		"difftool":    opts.New("dgt:x:y", "dir-diff", "extcmd=", "gui", "no-prompt", "prompt", "tool=", "tool-help", "trust-exit-code", "symlinks", "no-symlinks"),
		"grep":        opts.New("A:B:C:EFGHIO::PUahce:f:ilLm:nqrsvwz", "open-files-in-pager=?", "cached", "untracked", "no-index", "recurse-submodules", "max-count=", "threads="),
		"fetch":       opts.New("j:kmnpPqt", "all", "append", "depth=", "dry-run", "force", "jobs=", "multiple", "prune", "quiet", "tags", "upload-pack=", "verbose", "recurse-submodules=?"),
		"pull":        opts.New("j:qrv", "all", "depth=", "ff-only", "no-rebase", "quiet", "rebase=?", "upload-pack=", "verbose"),
		"ls-remote":   opts.New("hqt", "exit-code", "get-url", "heads", "quiet", "refs", "sort=", "symref", "tags", "upload-pack=", "server-option="),
		"push":        opts.New("fnqu", "all", "atomic", "delete", "dry-run", "exec=", "force", "force-with-lease=?", "mirror", "no-verify", "porcelain", "prune", "quiet", "receive-pack=", "repo=", "set-upstream", "tags", "verbose", "help"),
		"stash":       opts.New("apqu", "all", "include-untracked", "keep-index", "message=", "patch", "quiet", "staged"),
		"reset":       opts.New("pqN", "hard", "keep", "merge", "mixed", "patch", "quiet", "soft"),
		"checkout":    opts.New("b:B:fmpq", "detach", "force", "merge", "orphan=", "ours", "patch", "quiet", "theirs", "track=?", "no-track"),
		"restore":     opts.New("pqs:SW", "patch", "quiet", "source=", "staged", "worktree", "overlay", "no-overlay"),
		"clean":       opts.New("de:finqxX", "dry-run", "exclude=", "force", "interactive", "quiet"),
		"branch":      opts.New("acdDfilmMrtuvC", "all", "copy", "delete", "force", "list", "move", "remotes", "set-upstream-to=", "track=?", "verbose", "show-current", "contains=", "merged=?"),
		"maintenance": opts.New("q", "auto", "quiet", "schedule=", "task=", "scheduler="),
	}
})

// containerGlobal are the own options of the container clients, before
// their subcommand (cobra/pflag: never abbreviated). What follows is not
// parsed: each subcommand has its own options, which a session key keeps.
var containerGlobal = sync.OnceValue(func() map[string]*opts.Spec {
	return map[string]*opts.Spec{
		"docker": exactInOrder(opts.New("c:DH:l:hv", "config=", "context=", "debug", "host=", "log-level=", "tls", "tlscacert=",
			"tlscert=", "tlskey=", "tlsverify", "help", "version")),
		"podman": exactInOrder(opts.New("c:hrv", "cdi-spec-dir=", "cgroup-manager=", "config=", "conmon=", "connection=", "db-backend=",
			"events-backend=", "help", "hooks-dir=", "identity=", "imagestore=", "log-level=", "module=", "network-cmd-path=",
			"network-config-dir=", "out=", "remote", "root=", "runroot=", "runtime=", "runtime-flag=", "ssh=", "storage-driver=",
			"storage-opt=", "syslog", "tmpdir=", "transient-store", "url=", "version", "volumepath=")),
		"nerdctl": exactInOrder(opts.New("a:H:hn:v", "address=", "bridge-ip=", "cgroup-manager=", "cni-netconfpath=", "cni-path=", "data-root=",
			"debug", "debug-full", "experimental", "help", "host=", "host-gateway-ip=", "hosts-dir=", "insecure-registry", "namespace=",
			"snapshotter=", "storage-driver=", "version")),
	}
})

// scriptBSD is script's command line as BSD and macOS read it (script
// [-adeFkpqr] [-t time] [-T fmt] [file [command …]]), with util-linux's
// options that take a value too, so either spelling finds FILE.
var scriptBSD = withInOrder(opts.New("aB:c:deE:fFI:kl:m:O:pqrt:T:", "append", "command=", "echo=", "flush", "force", "log-in=", "log-io=",
	"log-out=", "log-timing=", "logging-format=", "output-limit=", "quiet", "return", "timing=?", "help", "version"))

// goTop is the go command's own options, before the subcommand (go -C DIR).
var goTop = func() *opts.Spec {
	s := opts.New("", "C=")
	s.OneDash, s.Exact, s.InOrder = true, true, true
	return s
}()

// goBuild is the build flags of the go subcommands (Go's flag package). Read
// anywhere, not only before the packages: go test takes them after too.
var goBuild = func() *opts.Spec {
	s := opts.New("", "C=", "o=", "exec=", "toolexec=", "overlay=", "pgo=", "modfile=", "ldflags=", "gcflags=", "asmflags=",
		"tags=", "mod=", "p=", "coverpkg=", "covermode=", "run=", "bench=", "count=", "timeout=", "cpu=", "parallel=", "w", "u",
		"json", "v", "x", "n", "race", "cover", "short", "trimpath", "a", "i", "modcacherw", "buildvcs=", "vet=", "fuzz=", "benchtime=",
		"coverprofile=", "cpuprofile=", "memprofile=", "blockprofile=", "mutexprofile=", "trace=", "outputdir=", "skip=", "shuffle=", "failfast", "fullpath", "list=")
	s.OneDash, s.Exact = true, true
	return s
}()

// python is CPython's command line: options up to the script, or up to -c CMD or
// -m MODULE, after which everything is the program's.
var python = func() *opts.Spec {
	s := opts.New("bBc:dEhiIm:OPqRsSuvVW:xX:", "help", "help-env", "help-xoptions", "help-all", "version", "check-hash-based-pycs=")
	s.InOrder, s.Exact, s.Final = true, true, "cm"
	return s
}()

// pythonModules are the grammars of the modules python -m runs whose arguments
// name what they write (argparse: options anywhere, unique prefixes).
var pythonModules = map[string]*opts.Spec{
	"venv": opts.New("h", "clear", "copies", "help", "prompt=", "symlinks", "system-site-packages", "upgrade", "upgrade-deps",
		"without-pip", "without-scm-ignore-files"),
}

// uvTop is uv's options before its subcommand (clap: never abbreviated), and
// uvVenv those of uv venv.
var uvTop = func() *opts.Spec {
	s := opts.New("hnqvV", "allow-insecure-host=", "cache-dir=", "color=", "config-file=", "directory=", "help", "managed-python",
		"native-tls", "no-cache", "no-config", "no-managed-python", "no-progress", "no-python-downloads", "offline", "project=",
		"python-preference=", "quiet", "verbose", "version")
	s.InOrder, s.Exact = true, true
	return s
}()

var uvVenv = func() *opts.Spec {
	s := opts.New("f:hi:np:qv", "allow-existing", "allow-insecure-host=", "cache-dir=", "clear", "color=", "config-file=",
		"default-index=", "directory=", "exclude-newer=", "extra-index-url=", "find-links=", "help", "index=", "index-strategy=",
		"index-url=", "keyring-provider=", "link-mode=", "managed-python", "native-tls", "no-cache", "no-config", "no-index",
		"no-managed-python", "no-progress", "no-project", "no-python-downloads", "offline", "project=", "prompt=", "python=",
		"python-preference=", "quiet", "relocatable", "seed", "system-site-packages", "verbose")
	s.Exact = true
	return s
}()

// emptySpec parses the options of a program shellgate has no grammar for: no
// option takes a value, so every option word is only looked at for its letters.
var emptySpec = opts.New("")

var emptyInOrder = withInOrder(opts.New(""))

// ParseOpts records on c what its program makes of its arguments (Sub,
// Global, Opts, Operands, OptsEnd, Parsed). Analyze has done it for every
// command; call it again after changing Args.
func (c *Command) ParseOpts() {
	c.Opts, c.Operands, c.Global, c.Sub = nil, nil, nil, ""
	c.SubAt = -1
	dyn := func(i int) bool { return c.Flags[i]&ArgDynamic != 0 }
	switch c.Name {
	case "git":
		c.parseGlobalSub(gitGlobal, func(sub string) (*opts.Spec, bool) { s, ok := gitSpecs()[sub]; return s, ok }, dyn)
		return
	case "docker", "podman", "nerdctl":
		c.parseGlobalSub(containerGlobal()[c.Name], func(string) (*opts.Spec, bool) { return nil, false }, dyn)
		return
	case "go":
		r := goTop.Parse(c.Args, dyn)
		c.Global = r.Opts // go -C DIR, before the subcommand
		if r.End < len(c.Args) {
			c.Sub, c.SubAt = c.Args[r.End], r.End
			off := r.End + 1
			sr := goBuild.Parse(c.Args[off:], func(i int) bool { return dyn(i + off) })
			c.Opts = shift(sr.Opts, off)
			for _, i := range sr.Operands {
				c.Operands = append(c.Operands, i+off)
			}
		}
		c.Parsed = true
		return
	case "uv":
		r := uvTop.Parse(c.Args, dyn)
		if r.End < len(c.Args) && c.Args[r.End] == "venv" && !dyn(r.End) {
			c.Global, c.Sub, c.SubAt = r.Opts, "venv", r.End
			off := r.End + 1
			sr := uvVenv.Parse(c.Args[off:], func(i int) bool { return dyn(i + off) })
			c.Opts = shift(sr.Opts, off)
			for _, i := range sr.Operands {
				c.Operands = append(c.Operands, i+off)
			}
			c.OptsEnd, c.Parsed = len(c.Args), true
			return
		}
		// uv's own options, then the subcommand's words as any program's.
		off := r.End
		sr := emptySpec.Parse(c.Args[off:], func(i int) bool { return dyn(i + off) })
		c.Opts = append(r.Opts, shift(sr.Opts, off)...)
		for _, i := range sr.Operands {
			c.Operands = append(c.Operands, i+off)
		}
		c.OptsEnd, c.Parsed = off+sr.End, false
		return
	}
	if IsPython(c.Name) {
		// Sub is the module of -m; its arguments are read with its own grammar.
		r := python.Parse(c.Args, dyn)
		c.Opts, c.Operands, c.OptsEnd, c.Parsed = r.Opts, r.Operands, r.End, true
		if m := c.Values("m"); len(m) > 0 && c.OptFlag(m[0])&ArgDynamic == 0 {
			c.Sub, c.SubAt = m[0].Value, m[0].At
			if s := pythonModules[c.Sub]; s != nil {
				off := r.End
				sr := s.Parse(c.Args[off:], func(i int) bool { return dyn(i + off) })
				c.Opts = append(c.Opts, shift(sr.Opts, off)...)
				c.Operands = c.Operands[:0]
				for _, i := range sr.Operands {
					c.Operands = append(c.Operands, i+off)
				}
			}
		}
		return
	}
	s, ok := specFor(c.Name)
	if !ok {
		s = emptySpec
		if _, wrapped := wrappers[c.Name]; wrapped {
			s = emptyInOrder // the first operand is the command it runs
		}
	}
	c.Parsed = ok
	r := s.Parse(c.Args, dyn)
	c.Opts, c.Operands, c.OptsEnd = r.Opts, r.Operands, r.End
	if c.Name == "zip" {
		// zip's own parser: -TT CMD is one option, not -T twice.
		for i := 0; i+1 < len(c.Args); i++ {
			if c.Args[i] == "-TT" {
				c.Opts = append(c.Opts, opts.Opt{Name: "TT", Value: c.Args[i+1], HasValue: true, At: i + 1})
			}
		}
	}
}

// parseGlobalSub reads a program's own options with global, then those of
// its subcommand with the spec subSpec gives (an empty one, and Parsed
// false, when it gives none).
func (c *Command) parseGlobalSub(global *opts.Spec, subSpec func(string) (*opts.Spec, bool), dyn func(int) bool) {
	g := global.Parse(c.Args, dyn)
	c.Global = g.Opts
	if g.End >= len(c.Args) {
		c.Parsed = true
		return
	}
	c.Sub, c.SubAt = c.Args[g.End], g.End
	off := g.End + 1
	s, ok := subSpec(c.Sub)
	if !ok {
		s = emptySpec
	}
	c.Parsed = ok
	r := s.Parse(c.Args[off:], func(i int) bool { return dyn(i + off) })
	c.Opts = shift(r.Opts, off)
	c.Operands = make([]int, len(r.Operands))
	for k, i := range r.Operands {
		c.Operands[k] = i + off
	}
}

func shift(os []opts.Opt, off int) []opts.Opt {
	for k := range os {
		os[k].At += off
	}
	return os
}

// IsPython reports the names CPython is run by: python, python3, python3.12 …
func IsPython(name string) bool {
	return name == "python" || strings.HasPrefix(name, "python2") || strings.HasPrefix(name, "python3")
}

// Values returns the values of the options among names (letters or full long
// names) given to the program or to its subcommand.
func (c *Command) Values(names ...string) []opts.Opt {
	r := opts.Result{Opts: c.Opts}
	return r.Values(names...)
}

// Has reports whether any of names was given to the program or its subcommand.
func (c *Command) Has(names ...string) bool {
	r := opts.Result{Opts: c.Opts}
	return r.Has(names...)
}

// GlobalValues is Values for the options before a subcommand (git -c, -C).
func (c *Command) GlobalValues(names ...string) []opts.Opt {
	r := opts.Result{Opts: c.Global}
	return r.Values(names...)
}

// IsDynamic reports whether the argument at i is only known at run time.
func (c *Command) IsDynamic(i int) bool {
	return i >= 0 && i < len(c.Flags) && c.Flags[i]&ArgDynamic != 0
}

// OptFlag is the ArgFlag of the word that holds o's value.
func (c *Command) OptFlag(o opts.Opt) ArgFlag {
	if o.At >= 0 && o.At < len(c.Flags) {
		return c.Flags[o.At]
	}
	return 0
}

// KnownProgram reports whether the analysis has a grammar for name or follows
// what it runs (a wrapper, a shell, a runner).
func KnownProgram(name string) bool {
	_, spec := specMakers()[name]
	_, wrapped := wrappers[name]
	_, runner := subcommandRunners[name]
	return spec || wrapped || runner || shells[name]
}
