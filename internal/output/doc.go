// Package output captures one output stream (stdout or stderr) of a command within a
// memory bound, for the envelope's data.stdout/stderr, truncated, binary and
// full_output_path.
//
// The runner copies pipe bytes into a Capture with Write; when the command ends the
// caller calls Close and puts the Result in the envelope:
//
//   - Output within Options.Limit is kept exactly, and nothing touches the disk.
//   - Past the limit, the first and last Limit/2 bytes are kept, cut at a nearby line
//     boundary or else at a rune boundary, and joined by a marker line saying how many
//     bytes were left out and where the complete output is: a spill file, created
//     when the limit is first exceeded and capped at Options.SpillMax.
//   - Output whose first 8 KiB hold NUL bytes beside bytes no text holds (other C0
//     controls, DEL, bytes never in UTF-8), or NULs dense (over 8 and 10%), or
//     that is mostly invalid UTF-8 in what is kept, is binary: it is never shown as
//     text, and always spilled. A NUL or two among text (`find -print0`) is shown
//     as ␀, which loses nothing (a control removed only where the text has a ␀
//     of its own).
//   - Terminal control (escape sequences, control characters) is removed from the
//     text, '\r' and backspace rendered as a terminal would; output so changed is
//     spilled as printed (Result.Controls).
//   - Values of secrets (Options.Redact) become [REDACTED:NAME] before anything is
//     kept, in the text and the spill file alike, even split between writes.
//
// Memory stays bounded (about Limit bytes) whatever the volume, and Write never
// fails: a disk problem only means no spill file, reported in Result.SpillErr.
// Spill files live in a private directory (mode 0700, files 0600), named by a
// number in a Gate's own directory and by a random id elsewhere; Sweep
// removes those past their retention.
package output
