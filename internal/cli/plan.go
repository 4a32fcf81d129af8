package cli

import "github.com/spf13/cobra"

func newPlanCmd() *cobra.Command {
	return &cobra.Command{Use: "plan", Short: "Compile a slice placement and schedule it on the simulated cluster", Hidden: true}
}
