package shipping

// Label is a purchased shipping label. (Filled in by the labels work.)
type Label struct{}
