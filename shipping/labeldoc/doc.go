// Package labeldoc draws label documents: a label as PDF, PNG or ZPL, the same layout in each,
// the customs documents an international label carries, and a batch's labels as one document.
// The same stored data always gives the same bytes.
package labeldoc
