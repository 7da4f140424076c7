"""Mail as data: reading inbound mails (inbound), building outgoing ones (outbound)."""
