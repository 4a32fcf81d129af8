package llm

import (
	"strings"

	"github.com/raytpu/raytpu/rayvocab"
)

// DeploymentName is the deployment name c's model gets, without Serve
// LLM's "LLMServer:" prefix; for the external tests.
func DeploymentName(c *LLMConfig) string {
	return strings.TrimPrefix(rayvocab.ServeLLMServerName(c.ModelLoadingConfig.ModelID, c.DeploymentConfig.Name), ServerPrefix)
}
