package cli

import "github.com/spf13/cobra"

func newJobCmd() *cobra.Command {
	return &cobra.Command{Use: "job", Short: "Manage Ray jobs through the dashboard", Hidden: true}
}
