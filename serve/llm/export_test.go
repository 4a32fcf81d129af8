package llm

// DeploymentName is the deployment name c's model gets, without Serve
// LLM's "LLMServer:" prefix; for the external tests.
func DeploymentName(c *LLMConfig) string { return c.deploymentName() }
