package ray

// SetMaxAnswer sets how many bytes of a successful answer c reads, so that
// the limit can be tested without a 256 MiB answer.
func SetMaxAnswer(c *Client, n int64) { c.maxAnswer = n }
