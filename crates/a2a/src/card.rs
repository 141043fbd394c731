//! [`AgentCardBuilder`]: an agent card built field by field, by name, instead of the
//! generated constructor's eight positional arguments.

use crate::v1::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentProvider, AgentSkill, SecurityRequirement,
    SecurityScheme,
};

/// The protocol version the interface helpers of [`AgentCardBuilder`] declare.
const INTERFACE_VERSION: &str = "1.0";

impl AgentCard {
    /// Starts a card with what every card must say: the agent's name, what it does, and
    /// its version. The rest (interfaces, capabilities, skills, media types, security)
    /// is added by name on the returned builder.
    pub fn builder(
        name: impl Into<String>,
        description: impl Into<String>,
        version: impl Into<String>,
    ) -> AgentCardBuilder {
        AgentCardBuilder {
            card: AgentCard::new(
                name,
                description,
                Vec::new(),
                version,
                AgentCapabilities::default(),
                Vec::new(),
                Vec::new(),
                Vec::new(),
            ),
            input_modes_set: false,
            output_modes_set: false,
        }
    }
}

/// Builds an [`AgentCard`]; see [`AgentCard::builder`].
///
/// ```
/// use agentproto_a2a::v1::{AgentCard, AgentSkill};
///
/// let card = AgentCard::builder("Recipe Agent", "Helps with recipes.", "1.0.0")
///     .jsonrpc_interface("https://agent.example/")
///     .http_json_interface("https://agent.example/a2a/rest")
///     .streaming()
///     .skill(AgentSkill::new("cook", "Cook", "Suggests recipes", vec!["cooking".to_owned()]))
///     .build();
/// assert_eq!(card.supported_interfaces.len(), 2);
/// assert_eq!(card.default_input_modes, ["text/plain"]);
/// ```
///
/// Interfaces are listed in the order they are added, the first being the preferred one.
/// Unless set, both default media-type lists are `["text/plain"]`. The builder checks
/// nothing: a card without an interface is still a card, but no client can call it.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct AgentCardBuilder {
    card: AgentCard,
    input_modes_set: bool,
    output_modes_set: bool,
}

impl AgentCardBuilder {
    /// Adds an interface as given (any binding, version or tenant).
    pub fn interface(mut self, interface: AgentInterface) -> Self {
        self.card.supported_interfaces.push(interface);
        self
    }

    /// Adds the JSON-RPC binding of A2A 1.0 at `url`.
    pub fn jsonrpc_interface(self, url: impl Into<String>) -> Self {
        self.interface(AgentInterface::new(url, "JSONRPC", INTERFACE_VERSION))
    }

    /// Adds the HTTP+JSON (REST) binding of A2A 1.0 at `url`.
    pub fn http_json_interface(self, url: impl Into<String>) -> Self {
        self.interface(AgentInterface::new(url, "HTTP+JSON", INTERFACE_VERSION))
    }

    /// Adds the gRPC binding of A2A 1.0 at `url` (`host:port`, as the proto's comment
    /// and the official SDKs give it).
    pub fn grpc_interface(self, url: impl Into<String>) -> Self {
        self.interface(AgentInterface::new(url, "GRPC", INTERFACE_VERSION))
    }

    /// Replaces the capabilities as a whole.
    pub fn capabilities(mut self, capabilities: AgentCapabilities) -> Self {
        self.card.capabilities = capabilities;
        self
    }

    /// Declares streaming (`SendStreamingMessage`, `SubscribeToTask`).
    pub fn streaming(mut self) -> Self {
        self.card.capabilities.streaming = Some(true);
        self
    }

    /// Declares push notifications (the server needs push options to deliver them).
    pub fn push_notifications(mut self) -> Self {
        self.card.capabilities.push_notifications = Some(true);
        self
    }

    /// Declares an extended card, served to authenticated callers.
    pub fn extended_agent_card(mut self) -> Self {
        self.card.capabilities.extended_agent_card = Some(true);
        self
    }

    /// Declares an extension.
    pub fn extension(mut self, extension: AgentExtension) -> Self {
        self.card.capabilities.extensions.push(extension);
        self
    }

    /// Adds a skill.
    pub fn skill(mut self, skill: AgentSkill) -> Self {
        self.card.skills.push(skill);
        self
    }

    /// The media types the agent accepts, for every skill that does not say otherwise.
    pub fn input_modes<S: Into<String>>(mut self, modes: impl IntoIterator<Item = S>) -> Self {
        self.card.default_input_modes = modes.into_iter().map(Into::into).collect();
        self.input_modes_set = true;
        self
    }

    /// The media types the agent produces, for every skill that does not say otherwise.
    pub fn output_modes<S: Into<String>>(mut self, modes: impl IntoIterator<Item = S>) -> Self {
        self.card.default_output_modes = modes.into_iter().map(Into::into).collect();
        self.output_modes_set = true;
        self
    }

    /// Who runs the agent.
    pub fn provider(mut self, organization: impl Into<String>, url: impl Into<String>) -> Self {
        self.card.provider = Some(AgentProvider::new(url, organization));
        self
    }

    /// Where the agent's documentation is.
    pub fn documentation_url(mut self, url: impl Into<String>) -> Self {
        self.card.documentation_url = Some(url.into());
        self
    }

    /// The agent's icon.
    pub fn icon_url(mut self, url: impl Into<String>) -> Self {
        self.card.icon_url = Some(url.into());
        self
    }

    /// Declares a security scheme under `name` (requirements refer to it by that name).
    pub fn security_scheme(mut self, name: impl Into<String>, scheme: SecurityScheme) -> Self {
        self.card.security_schemes.0.push((name.into(), scheme));
        self
    }

    /// Adds a security requirement: a caller must satisfy one of the requirements.
    pub fn security_requirement(mut self, requirement: SecurityRequirement) -> Self {
        self.card.security_requirements.push(requirement);
        self
    }

    /// The card.
    pub fn build(mut self) -> AgentCard {
        if !self.input_modes_set {
            self.card.default_input_modes = vec!["text/plain".to_owned()];
        }
        if !self.output_modes_set {
            self.card.default_output_modes = vec!["text/plain".to_owned()];
        }
        self.card
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_card_encodes_like_one_written_by_hand() {
        let card = AgentCard::builder("a", "b", "1")
            .jsonrpc_interface("http://h/")
            .push_notifications()
            .input_modes(["application/json"])
            .provider("Org", "https://org.example")
            .build();
        let json = serde_json::to_value(&card).expect("encode");
        assert_eq!(json["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
        assert_eq!(json["supportedInterfaces"][0]["protocolVersion"], "1.0");
        assert_eq!(json["capabilities"]["pushNotifications"], true);
        assert_eq!(json["defaultInputModes"], serde_json::json!(["application/json"]));
        assert_eq!(json["defaultOutputModes"], serde_json::json!(["text/plain"]));
        assert_eq!(json["provider"]["organization"], "Org");
    }
}
