// Package email is the Email product: the one public operation POST /notifications/send under
// {email_base_url}, the durable send queue in badger, the delivery worker with its transports
// (outbox .eml files, SMTP through github.com/wneessen/go-mail), the message status machine with
// its delivery log, and the dashboard routes under /admin/v1/email.
//
// A send is validated and rendered in the request, then handed to a group committer that writes
// many concurrent sends in one durable transaction and answers each only after that commit
// (202 {"id":"msg_...","status":"queued"}). The worker claims due messages by moving their queue
// entry to the end of a lease, delivers them, and records the outcome through Advance, the one
// place status moves are checked. A crash mid-delivery leaves the queue entry in place: once the
// lease runs out the message is delivered again.
//
// See "Email" in the public REST interface and docs/email.md.
package email
