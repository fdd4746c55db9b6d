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
    blob bytea NOT NULL,
    task_path text DEFAULT ''::text NOT NULL
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

INSERT INTO public.checkpoint_blobs VALUES ('agent', '', '__start__', '00000000000000000000000000000001.0.5549596608357211', 'msgpack', '\x81a86d6573736167657391c7a10594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b07768617420697320696e20612e70793fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', '__start__', '00000000000000000000000000000002.0.5442393963522533', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'messages', '00000000000000000000000000000002.0.617677686054291', 'msgpack', '\x91c7a10594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b07768617420697320696e20612e70793fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'branch:to:agent', '00000000000000000000000000000002.0.45888582415944357', 'null', '\x');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'messages', '00000000000000000000000000000003.0.7699291961618676', 'msgpack', '\x92c7a10594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b07768617420697320696e20612e70793fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec801340594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746181aa6d6f64656c5f6e616d65ab6770742d346f2d6d696e69a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a9726561645f66696c65a46172677381a470617468a4612e7079a26964a663616c6c5f31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d6574616461746183ac696e7075745f746f6b656e735aad6f75747075745f746f6b656e7305ac746f74616c5f746f6b656e735fb36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'branch:to:agent', '00000000000000000000000000000003.0.9916025068126754', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'branch:to:tools', '00000000000000000000000000000003.0.45016587736740776', 'null', '\x');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'messages', '00000000000000000000000000000004.0.29367729407707444', 'msgpack', '\x93c7a10594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b07768617420697320696e20612e70793fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec801340594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746181aa6d6f64656c5f6e616d65ab6770742d346f2d6d696e69a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a9726561645f66696c65a46172677381a470617468a4612e7079a26964a663616c6c5f31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d6574616461746183ac696e7075745f746f6b656e735aad6f75747075745f746f6b656e7305ac746f74616c5f746f6b656e735fb36d6f64656c5f76616c69646174655f6a736f6ec7d50594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d65737361676589a7636f6e74656e74b0636f6e74656e7473206f6620612e7079b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d65a9726561645f66696c65a26964ad726573756c742d63616c6c5f31ac746f6f6c5f63616c6c5f6964a663616c6c5f31a86172746966616374c0a6737461747573a773756363657373b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'branch:to:agent', '00000000000000000000000000000004.0.6996933046752851', 'null', '\x');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'branch:to:tools', '00000000000000000000000000000004.0.6436766223449841', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'messages', '00000000000000000000000000000005.0.24091883634437294', 'msgpack', '\x94c7a10594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b07768617420697320696e20612e70793fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec801340594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746181aa6d6f64656c5f6e616d65ab6770742d346f2d6d696e69a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a9726561645f66696c65a46172677381a470617468a4612e7079a26964a663616c6c5f31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d6574616461746183ac696e7075745f746f6b656e735aad6f75747075745f746f6b656e7305ac746f74616c5f746f6b656e735fb36d6f64656c5f76616c69646174655f6a736f6ec7d50594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d65737361676589a7636f6e74656e74b0636f6e74656e7473206f6620612e7079b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d65a9726561645f66696c65a26964ad726573756c742d63616c6c5f31ac746f6f6c5f63616c6c5f6964a663616c6c5f31a86172746966616374c0a6737461747573a773756363657373b36d6f64656c5f76616c69646174655f6a736f6ec801100594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74b3612e707920686f6c6473206f6e65206c696e65b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746181aa6d6f64656c5f6e616d65ab6770742d346f2d6d696e69a474797065a26169a46e616d65c0a26964a461692d32a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d6574616461746183ac696e7075745f746f6b656e73cc82ad6f75747075745f746f6b656e7306ac746f74616c5f746f6b656e73cc88b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('agent', '', 'branch:to:agent', '00000000000000000000000000000005.0.9603232918576999', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', '__start__', '00000000000000000000000000000001.0.7361009147522336', 'msgpack', '\x83a86d6573736167657391c79c0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74ab74616b652061206e6f7465b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d32a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ea5746f706963a566696c6573a57475726e7301');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', '__start__', '00000000000000000000000000000002.0.2788663557089459', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'messages', '00000000000000000000000000000002.0.49386972840293486', 'msgpack', '\x91c79c0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74ab74616b652061206e6f7465b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d32a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'topic', '00000000000000000000000000000002.0.696082159836942', 'msgpack', '\xa566696c6573');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'turns', '00000000000000000000000000000002.0.30280703254186025', 'msgpack', '\x01');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'branch:to:note', '00000000000000000000000000000002.0.17554901152672775', 'null', '\x');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'messages', '00000000000000000000000000000003.0.9268657571894465', 'msgpack', '\x92c79c0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74ab74616b652061206e6f7465b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d32a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec7bf0594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a76e6f7465642031b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a36e2d31a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'turns', '00000000000000000000000000000003.0.5314939256638787', 'msgpack', '\x02');
INSERT INTO public.checkpoint_blobs VALUES ('notes', '', 'branch:to:note', '00000000000000000000000000000003.0.5707049598130552', 'empty', NULL);


--
-- Data for Name: checkpoint_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_migrations VALUES (0);
INSERT INTO public.checkpoint_migrations VALUES (1);
INSERT INTO public.checkpoint_migrations VALUES (2);
INSERT INTO public.checkpoint_migrations VALUES (3);
INSERT INTO public.checkpoint_migrations VALUES (4);
INSERT INTO public.checkpoint_migrations VALUES (5);
INSERT INTO public.checkpoint_migrations VALUES (6);
INSERT INTO public.checkpoint_migrations VALUES (7);
INSERT INTO public.checkpoint_migrations VALUES (8);
INSERT INTO public.checkpoint_migrations VALUES (9);


--
-- Data for Name: checkpoint_writes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_writes VALUES ('agent', '', '1f1ed7ba-79a7-62f3-bfff-2e3f7790490c', 'b2a38244-24c4-323c-8b26-25add569bfb9', 0, 'messages', 'msgpack', '\x91c7a10594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b07768617420697320696e20612e70793fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6e', '~__pregel_pull, __start__');
INSERT INTO public.checkpoint_writes VALUES ('agent', '', '1f1ed7ba-79a7-62f3-bfff-2e3f7790490c', 'b2a38244-24c4-323c-8b26-25add569bfb9', 1, 'branch:to:agent', 'null', '\x', '~__pregel_pull, __start__');
INSERT INTO public.checkpoint_writes VALUES ('agent', '', '1f1ed7ba-79d8-6c02-8000-fb1a26b82109', '9acef2e9-a95a-bfab-660f-b855a055eaf9', 0, 'messages', 'msgpack', '\x91c801340594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746181aa6d6f64656c5f6e616d65ab6770742d346f2d6d696e69a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a9726561645f66696c65a46172677381a470617468a4612e7079a26964a663616c6c5f31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d6574616461746183ac696e7075745f746f6b656e735aad6f75747075745f746f6b656e7305ac746f74616c5f746f6b656e735fb36d6f64656c5f76616c69646174655f6a736f6e', '~__pregel_pull, agent');
INSERT INTO public.checkpoint_writes VALUES ('agent', '', '1f1ed7ba-79d8-6c02-8000-fb1a26b82109', '9acef2e9-a95a-bfab-660f-b855a055eaf9', 1, 'branch:to:tools', 'null', '\x', '~__pregel_pull, agent');
INSERT INTO public.checkpoint_writes VALUES ('agent', '', '1f1ed7ba-7a50-6bca-8001-0ccf03c27447', '787937fe-7193-743e-bcfc-8a8c5736d9ec', 0, 'messages', 'msgpack', '\x91c7d50594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d65737361676589a7636f6e74656e74b0636f6e74656e7473206f6620612e7079b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d65a9726561645f66696c65a26964ad726573756c742d63616c6c5f31ac746f6f6c5f63616c6c5f6964a663616c6c5f31a86172746966616374c0a6737461747573a773756363657373b36d6f64656c5f76616c69646174655f6a736f6e', '~__pregel_pull, tools');
INSERT INTO public.checkpoint_writes VALUES ('agent', '', '1f1ed7ba-7a50-6bca-8001-0ccf03c27447', '787937fe-7193-743e-bcfc-8a8c5736d9ec', 1, 'branch:to:agent', 'null', '\x', '~__pregel_pull, tools');
INSERT INTO public.checkpoint_writes VALUES ('agent', '', '1f1ed7ba-7a78-6d41-8002-811606e7b595', '239e29de-d5ed-a9ea-e7af-6ccb516defcf', 0, 'messages', 'msgpack', '\x91c801100594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74b3612e707920686f6c6473206f6e65206c696e65b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746181aa6d6f64656c5f6e616d65ab6770742d346f2d6d696e69a474797065a26169a46e616d65c0a26964a461692d32a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d6574616461746183ac696e7075745f746f6b656e73cc82ad6f75747075745f746f6b656e7306ac746f74616c5f746f6b656e73cc88b36d6f64656c5f76616c69646174655f6a736f6e', '~__pregel_pull, agent');
INSERT INTO public.checkpoint_writes VALUES ('notes', '', '1f1ed7ba-7ad9-6e23-bfff-c9e25740540c', 'f839f3a4-f632-2cf5-68a1-ef283107e0a5', 0, 'messages', 'msgpack', '\x91c79c0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74ab74616b652061206e6f7465b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d32a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6e', '~__pregel_pull, __start__');
INSERT INTO public.checkpoint_writes VALUES ('notes', '', '1f1ed7ba-7ad9-6e23-bfff-c9e25740540c', 'f839f3a4-f632-2cf5-68a1-ef283107e0a5', 1, 'topic', 'msgpack', '\xa566696c6573', '~__pregel_pull, __start__');
INSERT INTO public.checkpoint_writes VALUES ('notes', '', '1f1ed7ba-7ad9-6e23-bfff-c9e25740540c', 'f839f3a4-f632-2cf5-68a1-ef283107e0a5', 2, 'turns', 'msgpack', '\x01', '~__pregel_pull, __start__');
INSERT INTO public.checkpoint_writes VALUES ('notes', '', '1f1ed7ba-7ad9-6e23-bfff-c9e25740540c', 'f839f3a4-f632-2cf5-68a1-ef283107e0a5', 3, 'branch:to:note', 'null', '\x', '~__pregel_pull, __start__');
INSERT INTO public.checkpoint_writes VALUES ('notes', '', '1f1ed7ba-7ae5-64ec-8000-e648f5134809', 'e0feb5d5-a461-74d3-2037-e1c0bb1c7338', 0, 'messages', 'msgpack', '\x91c7bf0594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a76e6f7465642031b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a36e2d31a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e', '~__pregel_pull, note');
INSERT INTO public.checkpoint_writes VALUES ('notes', '', '1f1ed7ba-7ae5-64ec-8000-e648f5134809', 'e0feb5d5-a461-74d3-2037-e1c0bb1c7338', 1, 'turns', 'msgpack', '\x02', '~__pregel_pull, note');


--
-- Data for Name: checkpoints; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoints VALUES ('agent', '', '1f1ed7ba-79a7-62f3-bfff-2e3f7790490c', NULL, NULL, '{"v": 3, "id": "1f1ed7ba-79a7-62f3-bfff-2e3f7790490c", "ts": "2026-12-01T11:37:57.387323+00:00", "pending_sends": [], "versions_seen": {"__input__": {}}, "channel_versions": {"__start__": "00000000000000000000000000000001.0.5549596608357211"}, "updated_channels": null}', '{"step": -1, "source": "input", "writes": {"__start__": {"messages": [{"id": ["langchain", "schema", "messages", "HumanMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "h-1", "type": "human", "content": "what is in a.py?"}}]}}, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('agent', '', '1f1ed7ba-79d8-6c02-8000-fb1a26b82109', '1f1ed7ba-79a7-62f3-bfff-2e3f7790490c', NULL, '{"v": 3, "id": "1f1ed7ba-79d8-6c02-8000-fb1a26b82109", "ts": "2026-12-01T11:37:57.407606+00:00", "pending_sends": [], "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.5549596608357211"}}, "channel_versions": {"messages": "00000000000000000000000000000002.0.617677686054291", "__start__": "00000000000000000000000000000002.0.5442393963522533", "branch:to:agent": "00000000000000000000000000000002.0.45888582415944357"}, "updated_channels": null}', '{"step": 0, "source": "loop", "writes": null, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('agent', '', '1f1ed7ba-7a50-6bca-8001-0ccf03c27447', '1f1ed7ba-79d8-6c02-8000-fb1a26b82109', NULL, '{"v": 3, "id": "1f1ed7ba-7a50-6bca-8001-0ccf03c27447", "ts": "2026-12-01T11:37:57.456756+00:00", "pending_sends": [], "versions_seen": {"agent": {"branch:to:agent": "00000000000000000000000000000002.0.45888582415944357"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.5549596608357211"}}, "channel_versions": {"messages": "00000000000000000000000000000003.0.7699291961618676", "__start__": "00000000000000000000000000000002.0.5442393963522533", "branch:to:agent": "00000000000000000000000000000003.0.9916025068126754", "branch:to:tools": "00000000000000000000000000000003.0.45016587736740776"}, "updated_channels": null}', '{"step": 1, "source": "loop", "writes": {"agent": {"messages": [{"id": ["langchain", "schema", "messages", "AIMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "ai-1", "type": "ai", "content": "", "tool_calls": [{"id": "call_1", "args": {"path": "a.py"}, "name": "read_file", "type": "tool_call"}], "usage_metadata": {"input_tokens": 90, "total_tokens": 95, "output_tokens": 5}, "response_metadata": {"model_name": "gpt-4o-mini"}, "invalid_tool_calls": []}}]}}, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('agent', '', '1f1ed7ba-7a78-6d41-8002-811606e7b595', '1f1ed7ba-7a50-6bca-8001-0ccf03c27447', NULL, '{"v": 3, "id": "1f1ed7ba-7a78-6d41-8002-811606e7b595", "ts": "2026-12-01T11:37:57.473178+00:00", "pending_sends": [], "versions_seen": {"agent": {"branch:to:agent": "00000000000000000000000000000002.0.45888582415944357"}, "tools": {"branch:to:tools": "00000000000000000000000000000003.0.45016587736740776"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.5549596608357211"}}, "channel_versions": {"messages": "00000000000000000000000000000004.0.29367729407707444", "__start__": "00000000000000000000000000000002.0.5442393963522533", "branch:to:agent": "00000000000000000000000000000004.0.6996933046752851", "branch:to:tools": "00000000000000000000000000000004.0.6436766223449841"}, "updated_channels": null}', '{"step": 2, "source": "loop", "writes": {"tools": {"messages": [{"id": ["langchain", "schema", "messages", "ToolMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "result-call_1", "name": "read_file", "type": "tool", "status": "success", "content": "contents of a.py", "tool_call_id": "call_1"}}]}}, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('agent', '', '1f1ed7ba-7a7d-609a-8003-051810ad77b7', '1f1ed7ba-7a78-6d41-8002-811606e7b595', NULL, '{"v": 3, "id": "1f1ed7ba-7a7d-609a-8003-051810ad77b7", "ts": "2026-12-01T11:37:57.474916+00:00", "pending_sends": [], "versions_seen": {"agent": {"branch:to:agent": "00000000000000000000000000000004.0.6996933046752851"}, "tools": {"branch:to:tools": "00000000000000000000000000000003.0.45016587736740776"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.5549596608357211"}}, "channel_versions": {"messages": "00000000000000000000000000000005.0.24091883634437294", "__start__": "00000000000000000000000000000002.0.5442393963522533", "branch:to:agent": "00000000000000000000000000000005.0.9603232918576999", "branch:to:tools": "00000000000000000000000000000004.0.6436766223449841"}, "updated_channels": null}', '{"step": 3, "source": "loop", "writes": {"agent": {"messages": [{"id": ["langchain", "schema", "messages", "AIMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "ai-2", "type": "ai", "content": "a.py holds one line", "tool_calls": [], "usage_metadata": {"input_tokens": 130, "total_tokens": 136, "output_tokens": 6}, "response_metadata": {"model_name": "gpt-4o-mini"}, "invalid_tool_calls": []}}]}}, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('notes', '', '1f1ed7ba-7ad9-6e23-bfff-c9e25740540c', NULL, NULL, '{"v": 3, "id": "1f1ed7ba-7ad9-6e23-bfff-c9e25740540c", "ts": "2026-12-01T11:37:57.512952+00:00", "pending_sends": [], "versions_seen": {"__input__": {}}, "channel_versions": {"__start__": "00000000000000000000000000000001.0.7361009147522336"}, "updated_channels": null}', '{"step": -1, "source": "input", "writes": {"__start__": {"topic": "files", "turns": 1, "messages": [{"id": ["langchain", "schema", "messages", "HumanMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "h-2", "type": "human", "content": "take a note"}}]}}, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('notes', '', '1f1ed7ba-7ae5-64ec-8000-e648f5134809', '1f1ed7ba-7ad9-6e23-bfff-c9e25740540c', NULL, '{"v": 3, "id": "1f1ed7ba-7ae5-64ec-8000-e648f5134809", "ts": "2026-12-01T11:37:57.517621+00:00", "pending_sends": [], "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.7361009147522336"}}, "channel_versions": {"topic": "00000000000000000000000000000002.0.696082159836942", "turns": "00000000000000000000000000000002.0.30280703254186025", "messages": "00000000000000000000000000000002.0.49386972840293486", "__start__": "00000000000000000000000000000002.0.2788663557089459", "branch:to:note": "00000000000000000000000000000002.0.17554901152672775"}, "updated_channels": null}', '{"step": 0, "source": "loop", "writes": null, "parents": {}}');
INSERT INTO public.checkpoints VALUES ('notes', '', '1f1ed7ba-7afe-6b58-8001-8793c779e380', '1f1ed7ba-7ae5-64ec-8000-e648f5134809', NULL, '{"v": 3, "id": "1f1ed7ba-7afe-6b58-8001-8793c779e380", "ts": "2026-12-01T11:37:57.528014+00:00", "pending_sends": [], "versions_seen": {"note": {"branch:to:note": "00000000000000000000000000000002.0.17554901152672775"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.7361009147522336"}}, "channel_versions": {"topic": "00000000000000000000000000000002.0.696082159836942", "turns": "00000000000000000000000000000003.0.5314939256638787", "messages": "00000000000000000000000000000003.0.9268657571894465", "__start__": "00000000000000000000000000000002.0.2788663557089459", "branch:to:note": "00000000000000000000000000000003.0.5707049598130552"}, "updated_channels": null}', '{"step": 1, "source": "loop", "writes": {"note": {"turns": 2, "messages": [{"id": ["langchain", "schema", "messages", "AIMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "n-1", "type": "ai", "content": "noted 1", "tool_calls": [], "invalid_tool_calls": []}}]}}, "parents": {}}');


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
-- Name: checkpoint_blobs_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoint_blobs_thread_id_idx ON public.checkpoint_blobs USING btree (thread_id);


--
-- Name: checkpoint_writes_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoint_writes_thread_id_idx ON public.checkpoint_writes USING btree (thread_id);


--
-- Name: checkpoints_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoints_thread_id_idx ON public.checkpoints USING btree (thread_id);


--
-- PostgreSQL database dump complete
--


