package shipping

// ServiceName is the human name of one of the carrier's services ("Ground Advantage" for
// GROUND_ADVANTAGE); ok is false for a code the carrier does not have.
func (c *TableCarrier) ServiceName(code string) (name string, ok bool) {
	for _, s := range c.card.Services {
		if s.Code == code {
			return s.Name, s.Name != ""
		}
	}
	return "", false
}
