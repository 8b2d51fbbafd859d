// Package email is the Email product: the one public operation POST /notifications/send under
// {email_base_url}, the durable send queue in badger, the delivery worker with its transports
// (outbox .eml files, SMTP through github.com/wneessen/go-mail), the message status machine with
// its delivery log, and the dashboard routes under /admin/v1/email.
//
// A send is validated and rendered in the request, then written through the store's group
// committer, which puts many concurrent sends in one durable transaction and answers each only
// after that commit (202 {"id":"msg_...","status":"queued"}). The worker claims due messages by moving each from
// the queue to a lease entry in one transaction, delivers them, and records the outcome through
// advance, the one place status moves are checked. Badger is single-process, so a lease can only
// outlive its holder across a crash: at start the worker puts every leased message back in the
// queue, and a message in flight at a crash is delivered again.
//
// See "Email" in the public REST interface and docs/email.md.
package email
