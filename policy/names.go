package policy

// dedicatedTools maps the commands of seed 001 §5.4 to the agent tool to use.
var dedicatedTools = names(map[string]string{
	"ls": "LS", "cat": "Read", "head": "Read", "tail": "Read",
	"grep": "Grep", "egrep": "Grep", "fgrep": "Grep", "rg": "Grep", "find": "Glob",
})

var privileged = names(map[string]bool{
	"sudo": true, "su": true, "doas": true, "pkexec": true, "run0": true, "sudoedit": true, "runuser": true,
})

// interpreters run code they read: piping fetched text into one runs it.
var interpreters = names(map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"fish": true, "yash": true, "rbash": true, "source": true, ".": true, "eval": true,
	"perl": true, "ruby": true, "node": true, "nodejs": true, "php": true, "lua": true,
	"Rscript": true, "pwsh": true, "powershell": true, "deno": true, "bun": true, "tclsh": true,
})

var networkClients = names(map[string]bool{
	"curl": true, "wget": true, "nc": true, "ncat": true, "netcat": true, "socat": true,
	"ssh": true, "scp": true, "sftp": true, "ftp": true, "telnet": true, "aria2c": true,
	"lftp": true, "tftp": true, "http": true, "https": true, "xh": true, "mosh": true,
	"ssh-copy-id": true, "rclone": true, "dig": true, "nslookup": true, "host": true, "drill": true,
	"kdig": true, "ping": true, "ping6": true, "traceroute": true, "tracepath": true, "mtr": true,
	"nmap": true, "whois": true, "arping": true,
	// Text browsers, mail, directory and file-share clients: each sends what
	// it is given to another host (session 30 review).
	"lynx": true, "w3m": true, "links": true, "elinks": true, "ssh-keyscan": true, "websocat": true, "grpcurl": true,
	"mail": true, "mailx": true, "mutt": true, "sendmail": true, "swaks": true, "msmtp": true,
	"ldapsearch": true, "ldapmodify": true, "ldapadd": true, "ldapdelete": true, "smbclient": true, "s3cmd": true,
	// Downloaders and installers that fetch whatever they are given (session 38).
	"wget2": true, "curlie": true, "yt-dlp": true, "youtube-dl": true, "cpanm": true,
})

// diskTools partition, format or wipe disks.
var diskTools = names(map[string]bool{
	"mke2fs": true, "mkswap": true, "mkdosfs": true, "mkntfs": true, "fdisk": true, "sfdisk": true,
	"cfdisk": true, "gdisk": true, "sgdisk": true, "parted": true, "wipefs": true, "blkdiscard": true,
	"Format-Volume": true, "Clear-Disk": true, "diskpart": true, "Initialize-Disk": true,
})

var powerTools = names(map[string]bool{
	"shutdown": true, "reboot": true, "poweroff": true, "halt": true, "Stop-Computer": true, "Restart-Computer": true,
})

// systemDirs are top-level directories whose recursive removal wrecks the system.
var systemDirs = map[string]bool{
	"/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true, "/lib": true, "/lib32": true,
	"/lib64": true, "/opt": true, "/proc": true, "/root": true, "/sbin": true, "/srv": true, "/sys": true,
	"/usr": true, "/var": true, "/Users": true, "/System": true, "/Library": true, "/Applications": true,
}

// escapeTools hand work to a daemon that runs it outside every sandbox.
var escapeTools = names(map[string]bool{
	"docker": true, "podman": true, "nerdctl": true, "systemd-run": true, "systemctl": true, "crontab": true,
	"at": true, "batch": true, "launchctl": true, "machinectl": true, "lxc": true, "incus": true,
	"docker-compose": true, "podman-compose": true, "xdg-open": true, "open": true, "gio": true,
})

// readOnlyDocker are docker/podman subcommands that run nothing.
var readOnlyDocker = map[string]bool{
	"ps": true, "images": true, "version": true, "info": true, "inspect": true, "logs": true,
	"--version": true, "--help": true, "help": true, "stats": true, "top": true, "port": true, "history": true,
	"ls": true, "list": true, "df": true, "diff": true,
}

// loaderVars change which programs, libraries or startup files run.
var loaderVars = map[string]bool{
	"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "DYLD_INSERT_LIBRARIES": true,
	"DYLD_LIBRARY_PATH": true, "BASH_ENV": true, "ENV": true, "PATH": true, "PYTHONPATH": true,
	"PYTHONSTARTUP": true, "PYTHONHOME": true, "PYTHONUSERBASE": true, "NODE_OPTIONS": true, "NODE_PATH": true,
	"PERL5LIB": true, "PERL5OPT": true, "PERLLIB": true, "RUBYLIB": true, "RUBYOPT": true, "GIT_CONFIG": true,
	"GIT_EXEC_PATH": true, "GIT_TEMPLATE_DIR": true, "GIT_DIR": true, "GIT_WORK_TREE": true, "GOFLAGS": true,
	"HOME": true, "OLDPWD": true, "CDPATH": true, "IFS": true, "SHELLOPTS": true, "BASHOPTS": true,
	"PS4": true, "JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true, "CLASSPATH": true,
	"GCONV_PATH": true, "MAKEFLAGS": true, "MFLAGS": true, "XDG_CONFIG_HOME": true, "ZDOTDIR": true,
	"GLOBIGNORE": true, "BASH_LOADABLES_PATH": true, "PIP_INDEX_URL": true, "PIP_EXTRA_INDEX_URL": true,
	"RUSTC_WRAPPER": true, "RUSTFLAGS": true, "CARGO_BUILD_RUSTC_WRAPPER": true, "GOTOOLCHAIN": true,
	"NPM_CONFIG_REGISTRY": true, "YARN_REGISTRY": true, "UV_INDEX_URL": true,
	"GCC_EXEC_PREFIX": true, "COMPILER_PATH": true,
}

// programVars name a program that make's built-in rules, configure, cmake
// and language build tools (pip, cargo's cc) run: CC=./x make runs ./x.
var programVars = map[string]bool{
	"CC": true, "CXX": true, "CPP": true, "LD": true, "AR": true, "AS": true, "FC": true, "F77": true,
	"LEX": true, "YACC": true, "RANLIB": true,
}

// pathListVars are module search paths: only an empty one is harmless.
var pathListVars = map[string]bool{
	"PYTHONPATH": true, "NODE_PATH": true, "PERL5LIB": true, "PERLLIB": true, "RUBYLIB": true, "CLASSPATH": true,
}

// dangerousGoFlags run programs when they appear in GOFLAGS.
var dangerousGoFlags = []string{"-toolexec", "-exec", "-overlay", "extld", "extar", "-pgo"}
