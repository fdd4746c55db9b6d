--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: checkpoint_blobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_blobs (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    channel text NOT NULL,
    version text NOT NULL,
    type text NOT NULL,
    blob bytea
);


--
-- Name: checkpoint_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_migrations (
    v integer NOT NULL
);


--
-- Name: checkpoint_writes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_writes (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    checkpoint_id text NOT NULL,
    task_id text NOT NULL,
    idx integer NOT NULL,
    channel text NOT NULL,
    type text,
    blob bytea NOT NULL
);


--
-- Name: checkpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoints (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    checkpoint_id text NOT NULL,
    parent_checkpoint_id text,
    type text,
    checkpoint jsonb NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL
);


--
-- Data for Name: checkpoint_blobs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_blobs VALUES ('agent', '', '__start__', '00000000000000000000000000000001.0.17127122964318042', 'msgpack', '\x81a86d6573736167657391c7a10594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b07768617420697320696e20612e70793fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', '__start__', '00000000000000000000000000000002.0.46630747020128216', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'messages', '00000000000000000000000000000002.0.8188342689638727', 'msgpack', '\x91c7a10594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b07768617420697320696e20612e70793fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'start:agent', '00000000000000000000000000000002.0.08833400994992313', 'msgpack', '\xa95f5f73746172745f5f');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'messages', '00000000000000000000000000000003.0.05980205296104857', 'msgpack', '\x92c7a10594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b07768617420697320696e20612e70793fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec801340594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746181aa6d6f64656c5f6e616d65ab6770742d346f2d6d696e69a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a9726561645f66696c65a46172677381a470617468a4612e7079a26964a663616c6c5f31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d6574616461746183ac696e7075745f746f6b656e735aad6f75747075745f746f6b656e7305ac746f74616c5f746f6b656e735fb36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'start:agent', '00000000000000000000000000000003.0.11378639925351786', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'agent', '00000000000000000000000000000003.0.5156846370801794', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'branch:agent:should_continue:tools', '00000000000000000000000000000003.0.00983896296653719', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'messages', '00000000000000000000000000000004.0.896118659355243', 'msgpack', '\x93c7a10594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b07768617420697320696e20612e70793fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec801340594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746181aa6d6f64656c5f6e616d65ab6770742d346f2d6d696e69a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a9726561645f66696c65a46172677381a470617468a4612e7079a26964a663616c6c5f31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d6574616461746183ac696e7075745f746f6b656e735aad6f75747075745f746f6b656e7305ac746f74616c5f746f6b656e735fb36d6f64656c5f76616c69646174655f6a736f6ec7d50594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d65737361676589a7636f6e74656e74b0636f6e74656e7473206f6620612e7079b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d65a9726561645f66696c65a26964ad726573756c742d63616c6c5f31ac746f6f6c5f63616c6c5f6964a663616c6c5f31a86172746966616374c0a6737461747573a773756363657373b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'agent', '00000000000000000000000000000004.0.3929849693774914', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'branch:agent:should_continue:tools', '00000000000000000000000000000004.0.579368857067825', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'tools', '00000000000000000000000000000004.0.5322745527353846', 'msgpack', '\xa5746f6f6c73');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'messages', '00000000000000000000000000000005.0.25695116460140677', 'msgpack', '\x94c7a10594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b07768617420697320696e20612e70793fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec801340594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746181aa6d6f64656c5f6e616d65ab6770742d346f2d6d696e69a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a9726561645f66696c65a46172677381a470617468a4612e7079a26964a663616c6c5f31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d6574616461746183ac696e7075745f746f6b656e735aad6f75747075745f746f6b656e7305ac746f74616c5f746f6b656e735fb36d6f64656c5f76616c69646174655f6a736f6ec7d50594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d65737361676589a7636f6e74656e74b0636f6e74656e7473206f6620612e7079b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d65a9726561645f66696c65a26964ad726573756c742d63616c6c5f31ac746f6f6c5f63616c6c5f6964a663616c6c5f31a86172746966616374c0a6737461747573a773756363657373b36d6f64656c5f76616c69646174655f6a736f6ec801100594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74b3612e707920686f6c6473206f6e65206c696e65b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746181aa6d6f64656c5f6e616d65ab6770742d346f2d6d696e69a474797065a26169a46e616d65c0a26964a461692d32a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d6574616461746183ac696e7075745f746f6b656e73cc82ad6f75747075745f746f6b656e7306ac746f74616c5f746f6b656e73cc88b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'agent', '00000000000000000000000000000005.0.47072763330830325', 'msgpack', '\xa56167656e74');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'tools', '00000000000000000000000000000005.0.012069009562327149', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', '__start__', '00000000000000000000000000000001.0.023282301659415694', 'msgpack', '\x83a86d6573736167657391c79c0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74ab74616b652061206e6f7465b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d32a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ea5746f706963a566696c6573a57475726e7301');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', '__start__', '00000000000000000000000000000002.0.04923359398313398', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'messages', '00000000000000000000000000000002.0.6297718127829416', 'msgpack', '\x91c79c0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74ab74616b652061206e6f7465b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d32a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'topic', '00000000000000000000000000000002.0.28652645230617246', 'msgpack', '\xa566696c6573');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'turns', '00000000000000000000000000000002.0.027336671738353746', 'msgpack', '\x01');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'start:note', '00000000000000000000000000000002.0.23866290528837752', 'msgpack', '\xa95f5f73746172745f5f');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'messages', '00000000000000000000000000000003.0.7399127225949756', 'msgpack', '\x92c79c0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74ab74616b652061206e6f7465b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d32a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec7bf0594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a76e6f7465642031b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a36e2d31a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'turns', '00000000000000000000000000000003.0.333014683731225', 'msgpack', '\x02');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'start:note', '00000000000000000000000000000003.0.4586166374854347', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'note', '00000000000000000000000000000003.0.6754001058279652', 'msgpack', '\xa46e6f7465');


--
-- Data for Name: checkpoint_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_migrations VALUES (0);
INSERT INTO public.checkpoint_migrations VALUES (1);
INSERT INTO public.checkpoint_migrations VALUES (2);
INSERT INTO public.checkpoint_migrations VALUES (3);
INSERT INTO public.checkpoint_migrations VALUES (4);


--
-- Data for Name: checkpoint_writes; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: checkpoints; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoints VALUES ('agent', '', '1f1ed7ba-3311-6fa8-bfff-0abdec46aa81', NULL, NULL, '{"v": 1, "id": "1f1ed7ba-3311-6fa8-bfff-0abdec46aa81", "ts": "2026-12-01T11:37:49.986155+00:00", "pending_sends": [], "versions_seen": {"__input__": {}}, "channel_versions": {"__start__": "00000000000000000000000000000001.0.17127122964318042"}}', '{"step": -1, "source": "input", "writes": {"__start__": {"messages": [{"id": ["langchain", "schema", "messages", "HumanMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "h-1", "type": "human", "content": "what is in a.py?"}}]}}, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('agent', '', '1f1ed7ba-3315-621c-8000-92b9ed56ad22', '1f1ed7ba-3311-6fa8-bfff-0abdec46aa81', NULL, '{"v": 1, "id": "1f1ed7ba-3315-621c-8000-92b9ed56ad22", "ts": "2026-12-01T11:37:49.987461+00:00", "pending_sends": [], "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.17127122964318042"}}, "channel_versions": {"messages": "00000000000000000000000000000002.0.8188342689638727", "__start__": "00000000000000000000000000000002.0.46630747020128216", "start:agent": "00000000000000000000000000000002.0.08833400994992313"}}', '{"step": 0, "source": "loop", "writes": null, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('agent', '', '1f1ed7ba-336d-6aae-8001-bc6b31b3f0e8', '1f1ed7ba-3315-621c-8000-92b9ed56ad22', NULL, '{"v": 1, "id": "1f1ed7ba-336d-6aae-8001-bc6b31b3f0e8", "ts": "2026-12-01T11:37:50.023718+00:00", "pending_sends": [], "versions_seen": {"agent": {"start:agent": "00000000000000000000000000000002.0.08833400994992313"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.17127122964318042"}}, "channel_versions": {"agent": "00000000000000000000000000000003.0.5156846370801794", "messages": "00000000000000000000000000000003.0.05980205296104857", "__start__": "00000000000000000000000000000002.0.46630747020128216", "start:agent": "00000000000000000000000000000003.0.11378639925351786", "branch:agent:should_continue:tools": "00000000000000000000000000000003.0.00983896296653719"}}', '{"step": 1, "source": "loop", "writes": {"agent": {"messages": [{"id": ["langchain", "schema", "messages", "AIMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "ai-1", "type": "ai", "content": "", "tool_calls": [{"id": "call_1", "args": {"path": "a.py"}, "name": "read_file", "type": "tool_call"}], "usage_metadata": {"input_tokens": 90, "total_tokens": 95, "output_tokens": 5}, "response_metadata": {"model_name": "gpt-4o-mini"}, "invalid_tool_calls": []}}]}}, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('agent', '', '1f1ed7ba-33ad-65ab-8002-201218a734bf', '1f1ed7ba-336d-6aae-8001-bc6b31b3f0e8', NULL, '{"v": 1, "id": "1f1ed7ba-33ad-65ab-8002-201218a734bf", "ts": "2026-12-01T11:37:50.049793+00:00", "pending_sends": [], "versions_seen": {"agent": {"start:agent": "00000000000000000000000000000002.0.08833400994992313"}, "tools": {"branch:agent:should_continue:tools": "00000000000000000000000000000003.0.00983896296653719"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.17127122964318042"}}, "channel_versions": {"agent": "00000000000000000000000000000004.0.3929849693774914", "tools": "00000000000000000000000000000004.0.5322745527353846", "messages": "00000000000000000000000000000004.0.896118659355243", "__start__": "00000000000000000000000000000002.0.46630747020128216", "start:agent": "00000000000000000000000000000003.0.11378639925351786", "branch:agent:should_continue:tools": "00000000000000000000000000000004.0.579368857067825"}}', '{"step": 2, "source": "loop", "writes": {"tools": {"messages": [{"id": ["langchain", "schema", "messages", "ToolMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "result-call_1", "name": "read_file", "type": "tool", "status": "success", "content": "contents of a.py", "tool_call_id": "call_1"}}]}}, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('agent', '', '1f1ed7ba-33b2-6ecc-8003-9ee9307f6f61', '1f1ed7ba-33ad-65ab-8002-201218a734bf', NULL, '{"v": 1, "id": "1f1ed7ba-33b2-6ecc-8003-9ee9307f6f61", "ts": "2026-12-01T11:37:50.052088+00:00", "pending_sends": [], "versions_seen": {"agent": {"tools": "00000000000000000000000000000004.0.5322745527353846", "start:agent": "00000000000000000000000000000002.0.08833400994992313"}, "tools": {"branch:agent:should_continue:tools": "00000000000000000000000000000003.0.00983896296653719"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.17127122964318042"}}, "channel_versions": {"agent": "00000000000000000000000000000005.0.47072763330830325", "tools": "00000000000000000000000000000005.0.012069009562327149", "messages": "00000000000000000000000000000005.0.25695116460140677", "__start__": "00000000000000000000000000000002.0.46630747020128216", "start:agent": "00000000000000000000000000000003.0.11378639925351786", "branch:agent:should_continue:tools": "00000000000000000000000000000004.0.579368857067825"}}', '{"step": 3, "source": "loop", "writes": {"agent": {"messages": [{"id": ["langchain", "schema", "messages", "AIMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "ai-2", "type": "ai", "content": "a.py holds one line", "tool_calls": [], "usage_metadata": {"input_tokens": 130, "total_tokens": 136, "output_tokens": 6}, "response_metadata": {"model_name": "gpt-4o-mini"}, "invalid_tool_calls": []}}]}}, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('notes', '', '1f1ed7ba-33e5-6b9d-bfff-31bf444c8b8d', NULL, NULL, '{"v": 1, "id": "1f1ed7ba-33e5-6b9d-bfff-31bf444c8b8d", "ts": "2026-12-01T11:37:50.072909+00:00", "pending_sends": [], "versions_seen": {"__input__": {}}, "channel_versions": {"__start__": "00000000000000000000000000000001.0.023282301659415694"}}', '{"step": -1, "source": "input", "writes": {"__start__": {"topic": "files", "turns": 1, "messages": [{"id": ["langchain", "schema", "messages", "HumanMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "h-2", "type": "human", "content": "take a note"}}]}}, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('notes', '', '1f1ed7ba-33e8-6e78-8000-30692a482af3', '1f1ed7ba-33e5-6b9d-bfff-31bf444c8b8d', NULL, '{"v": 1, "id": "1f1ed7ba-33e8-6e78-8000-30692a482af3", "ts": "2026-12-01T11:37:50.074200+00:00", "pending_sends": [], "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.023282301659415694"}}, "channel_versions": {"topic": "00000000000000000000000000000002.0.28652645230617246", "turns": "00000000000000000000000000000002.0.027336671738353746", "messages": "00000000000000000000000000000002.0.6297718127829416", "__start__": "00000000000000000000000000000002.0.04923359398313398", "start:note": "00000000000000000000000000000002.0.23866290528837752"}}', '{"step": 0, "source": "loop", "writes": null, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('notes', '', '1f1ed7ba-33f9-6687-8001-236987466a07', '1f1ed7ba-33e8-6e78-8000-30692a482af3', NULL, '{"v": 1, "id": "1f1ed7ba-33f9-6687-8001-236987466a07", "ts": "2026-12-01T11:37:50.080954+00:00", "pending_sends": [], "versions_seen": {"note": {"start:note": "00000000000000000000000000000002.0.23866290528837752"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.023282301659415694"}}, "channel_versions": {"note": "00000000000000000000000000000003.0.6754001058279652", "topic": "00000000000000000000000000000002.0.28652645230617246", "turns": "00000000000000000000000000000003.0.333014683731225", "messages": "00000000000000000000000000000003.0.7399127225949756", "__start__": "00000000000000000000000000000002.0.04923359398313398", "start:note": "00000000000000000000000000000003.0.4586166374854347"}}', '{"step": 1, "source": "loop", "writes": {"note": {"turns": 2, "messages": [{"id": ["langchain", "schema", "messages", "AIMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "n-1", "type": "ai", "content": "noted 1", "tool_calls": [], "invalid_tool_calls": []}}]}}, "parents": {}}');


--
-- Name: checkpoint_blobs checkpoint_blobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_blobs
    ADD CONSTRAINT checkpoint_blobs_pkey PRIMARY KEY (thread_id, checkpoint_ns, channel, version);


--
-- Name: checkpoint_migrations checkpoint_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_migrations
    ADD CONSTRAINT checkpoint_migrations_pkey PRIMARY KEY (v);


--
-- Name: checkpoint_writes checkpoint_writes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_writes
    ADD CONSTRAINT checkpoint_writes_pkey PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx);


--
-- Name: checkpoints checkpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoints
    ADD CONSTRAINT checkpoints_pkey PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id);


--
-- PostgreSQL database dump complete
--


