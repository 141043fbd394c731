//! The push-config operations of [`Core`]: checking a config's URL against the SSRF
//! guard, and creating, reading, listing and deleting a task's configs.

use crate::errors::{A2aError, ErrorKind};
use crate::executor::AgentExecutor;
use crate::store::{Body, PushConfigRecord, TaskKey};
use crate::tasks::encode;
use crate::v1::{
    DeleteTaskPushNotificationConfigRequest, GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, TaskPushNotificationConfig,
};

use super::core::{invalid, Answer, CallContext, Core, Reply};

impl<E: AgentExecutor> Core<E> {
    /// A config checked and completed (id, tenant) with its store record; `url_path`
    /// names its `url` in errors.
    pub(super) async fn push_record(
        &self,
        cx: &CallContext,
        mut c: TaskPushNotificationConfig,
        url_path: &str,
    ) -> Result<(TaskPushNotificationConfig, PushConfigRecord), A2aError> {
        if c.id.is_empty() {
            c.id = uuid::Uuid::new_v4().to_string();
        }
        c.tenant = cx.tenant.clone();
        if !(c.url.starts_with("http://") || c.url.starts_with("https://")) {
            return Err(invalid(url_path, "an absolute http or https URL"));
        }
        self.check_push_target(&c.url, url_path).await?;
        let key = TaskKey::new(cx.tenant.clone(), c.task_id.clone());
        let record = PushConfigRecord { task: key, id: c.id.clone(), body: encode(&c)? };
        Ok((c, record))
    }

    /// Refuses a push URL the SSRF guard would refuse at delivery: a scheme other than
    /// http(s), an address literal that is not public, or a name whose every address is
    /// not (the same rule as the worker's resolver). A name that does not resolve now is
    /// let through: it is checked again, and a refusal logged, when a delivery is made.
    pub(super) async fn check_push_target(&self, url: &str, url_path: &str) -> Result<(), A2aError> {
        let guard = &self.options.push_guard;
        let refused = |refusal: crate::push::Refused| {
            A2aError::new(ErrorKind::InvalidParams)
                .with_message(format!(
                    "Invalid parameters at {url_path}: the push notification URL is refused: {refusal}"
                ))
                .with("path", url_path)
                .with("rule", "ssrf-guard")
        };
        let parsed = guard.check_url(url).map_err(refused)?;
        let Some(host) = parsed.host_str() else { return Ok(()) };
        if host.starts_with('[') || host.parse::<std::net::IpAddr>().is_ok() {
            return Ok(()); // an address literal, checked above
        }
        let port = parsed.port_or_known_default().unwrap_or(80);
        let lookup = tokio::net::lookup_host((host, port));
        let Ok(Ok(addrs)) = tokio::time::timeout(self.options.push_resolve_timeout, lookup).await else {
            return Ok(());
        };
        let mut first_refusal = None;
        for addr in addrs {
            match guard.check_ip(host, addr.ip()) {
                Ok(()) => return Ok(()),
                Err(r) => {
                    first_refusal.get_or_insert(r);
                }
            }
        }
        match first_refusal {
            Some(r) => Err(refused(r)),
            None => Ok(()),
        }
    }

    pub(super) async fn store_push_config(
        &self,
        cx: &CallContext,
        c: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        let (c, record) = self.push_record(cx, c, "$.params.url").await?;
        self.tasks.store().put_push_config(record).await?;
        Ok(c)
    }

    pub(super) async fn existing_task(&self, cx: &CallContext, id: &str) -> Result<TaskKey, A2aError> {
        let key = TaskKey::new(cx.tenant.clone(), id.to_owned());
        if self.tasks.store().get_task(&key).await?.is_none() {
            return Err(A2aError::task_not_found(id));
        }
        Ok(key)
    }

    pub(super) async fn create_push(
        &self,
        cx: &CallContext,
        r: TaskPushNotificationConfig,
    ) -> Result<Answer, A2aError> {
        self.require_push()?;
        if r.task_id.is_empty() {
            return Err(invalid("$.params.taskId", "a task id"));
        }
        self.existing_task(cx, &r.task_id).await?;
        let stored = self.store_push_config(cx, r).await?;
        Ok(Answer::Value(Reply::PushConfig(Body::from_value(stored))))
    }

    pub(super) async fn get_push(
        &self,
        cx: &CallContext,
        r: GetTaskPushNotificationConfigRequest,
    ) -> Result<Answer, A2aError> {
        self.require_push()?;
        let key = self.existing_task(cx, &r.task_id).await?;
        let rec = self.tasks.store().get_push_config(&key, &r.id).await?.ok_or_else(|| {
            A2aError::new(ErrorKind::TaskNotFound)
                .with_message(format!("push notification config {} not found for task {}", r.id, r.task_id))
                .with("taskId", r.task_id.clone())
                .with("configId", r.id.clone())
        })?;
        Ok(Answer::Value(Reply::PushConfig(Body::from_bytes(rec.body))))
    }

    pub(super) async fn list_push(
        &self,
        cx: &CallContext,
        r: ListTaskPushNotificationConfigsRequest,
    ) -> Result<Answer, A2aError> {
        self.require_push()?;
        let key = self.existing_task(cx, &r.task_id).await?;
        if r.page_size < 0 || r.page_size > 100 {
            return Err(invalid("$.params.pageSize", "an integer from 0 to 100 (0: the default)"));
        }
        let limit = if r.page_size == 0 { 100 } else { r.page_size as usize };
        let after = (!r.page_token.is_empty()).then_some(r.page_token.as_str());
        let recs = self.tasks.store().list_push_configs(&key, after, limit + 1).await?;
        let more = recs.len() > limit;
        let mut configs = Vec::new();
        for rec in recs.iter().take(limit) {
            let c = agentproto_codec::decode_slice::<TaskPushNotificationConfig>(&rec.body, "$")
                .map_err(|e| A2aError::new(ErrorKind::Internal).with_message(e.to_string()))?
                .value;
            configs.push(c);
        }
        let next = if more { configs.last().map(|c| c.id.clone()).unwrap_or_default() } else { String::new() };
        let resp = ListTaskPushNotificationConfigsResponse { configs, next_page_token: next };
        Ok(Answer::Value(Reply::PushConfigs(resp)))
    }

    pub(super) async fn delete_push(
        &self,
        cx: &CallContext,
        r: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<Answer, A2aError> {
        self.require_push()?;
        let key = self.existing_task(cx, &r.task_id).await?;
        // Idempotent: deleting a config that is already gone succeeds.
        self.tasks.store().delete_push_config(&key, &r.id).await?;
        Ok(Answer::Value(Reply::Empty))
    }
}
