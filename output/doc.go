// Package output captures one output stream (stdout or stderr) of a command within a
// memory bound: the envelope gets the head and tail of the text, and the complete
// bytes go to a private spill file once they no longer fit, or when they look binary.
//
// The runner copies pipe bytes into a Capture with Write; when the command ends the
// caller calls Close and puts the Result in the envelope.
package output
