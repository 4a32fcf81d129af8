package cli

// WriteTopTable renders a reading as `raytpu top` does, for the black-box
// test that compares the command's output on a real cluster.
var WriteTopTable = writeTopTable
